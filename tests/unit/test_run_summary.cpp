// A run's outcome read back from the store: improved, no improvement over the reference, no
// correct candidate; the best's distance from the measured bound; evaluations to 90% of it.
#include <QtTest>

#include "kf/run_summary.h"
#include "testsupport.h"

using namespace kf;

class TestRunSummary : public QObject {
    Q_OBJECT

private:
    static Diagnosis ok(double speedup, double bw_fraction, double flop_fraction, const std::string& bound) {
        Diagnosis d;
        d.status = Status::Ok;
        d.timing = Timing{};
        d.timing->speedup = speedup;
        d.roofline = Roofline{};
        d.roofline->bandwidth_fraction = bw_fraction;
        d.roofline->compute_fraction = flop_fraction;
        d.roofline->bound = bound;
        d.roofline->peak_gbps = 100;
        d.roofline->achieved_gbps = 100 * bw_fraction;
        return d;
    }
    static Diagnosis failed() {
        Diagnosis d;
        d.status = Status::Incorrect;
        return d;
    }
    static std::int64_t add(ProjectStore& s, std::int64_t run, const std::string& expert, const std::string& family,
                            const Diagnosis& d) {
        CandidateRecord c;
        c.run_id = run;
        c.task = "t";
        c.source = "// " + expert + family + std::to_string(s.candidates(run).size());
        c.expert = expert;
        c.family = family;
        std::int64_t id = s.add_candidate(c);
        s.add_evaluation(id, d);
        return id;
    }

private slots:
    void reference_alone_is_no_improvement() {
        ProjectStore s = ProjectStore::create(kftest::temp_dir("summary-a"), "p");
        auto run = s.add_run("t", nlohmann::json::object());
        auto ref = add(s, run, "seed", "reference", ok(1.0, 0.40, 0.01, "memory"));
        add(s, run, "tuner", "reference", failed());
        // Within timing noise of the reference: not an improvement.
        add(s, run, "template", "template/map", ok(1.01, 0.41, 0.01, "memory"));
        RunSummary r = summarize_run(s, run);
        QCOMPARE(r.outcome, RunOutcome::NoImprovement);
        QCOMPARE(r.evaluations, 3);
        QCOMPARE(r.correct, 2);
        // The reported best is the best correct candidate (here the 1.01x one), not flagged reference.
        QVERIFY(r.best_id);
        QVERIFY(*r.best_id != ref);
        QCOMPARE(r.best_speedup, 1.01);
        QVERIFY(r.line().find("no improvement over the reference") != std::string::npos);
        QVERIFY2(r.line().find("41% of the measured copy bandwidth") != std::string::npos, r.line().c_str());
        auto j = r.to_json();
        QCOMPARE(j["outcome"].get<std::string>(), std::string("no_improvement"));
        QCOMPARE(j["best"]["bound"].get<std::string>(), std::string("memory"));
    }

    /** The reference timed above itself (noise) is the best: the line names the other candidate that fell short. */
    void reference_itself_best() {
        ProjectStore s = ProjectStore::create(kftest::temp_dir("summary-d"), "p");
        auto run = s.add_run("t", nlohmann::json::object());
        auto ref = add(s, run, "seed", "reference", ok(1.03, 0.43, 0.01, "memory"));
        auto other = add(s, run, "template", "template/stencil", ok(0.98, 0.41, 0.01, "memory"));
        RunSummary r = summarize_run(s, run);
        QCOMPARE(r.outcome, RunOutcome::NoImprovement);
        QCOMPARE(*r.best_id, ref);
        QVERIFY(r.best_is_reference);
        QCOMPARE(*r.other_id, other);
        const std::string want = "no improvement over the reference: the best correct candidate is the reference itself (" +
                                 std::to_string(ref) + ", 1.03x in its own timing); the fastest other, " +
                                 std::to_string(other) + " (template/stencil), is 0.98x, under the 1.02x needed";
        QVERIFY2(r.line().rfind(want, 0) == 0, r.line().c_str());
        auto j = r.to_json();
        QCOMPARE(j["fastest_other"]["candidate"].get<std::int64_t>(), other);
        QCOMPARE(j["fastest_other"]["family"].get<std::string>(), std::string("template/stencil"));
        // Nothing else correct: said so, and the JSON's fastest_other is null.
        auto run2 = s.add_run("t", nlohmann::json::object());
        add(s, run2, "seed", "reference", ok(1.0, 0.43, 0.01, "memory"));
        add(s, run2, "template", "template/stencil", failed());
        RunSummary r2 = summarize_run(s, run2);
        QVERIFY2(r2.line().find("the reference itself") != std::string::npos &&
                     r2.line().find("no other candidate was correct") != std::string::npos,
                 r2.line().c_str());
        QVERIFY(r2.to_json()["fastest_other"].is_null());
    }

    void faster_candidate_is_an_improvement_with_its_bound() {
        ProjectStore s = ProjectStore::create(kftest::temp_dir("summary-b"), "p");
        auto run = s.add_run("t", nlohmann::json::object());
        add(s, run, "seed", "reference", ok(1.0, 0.30, 0.01, "memory"));
        add(s, run, "template", "template/map", ok(1.5, 0.45, 0.01, "memory"));
        add(s, run, "tuner", "template/map", failed());
        auto best = add(s, run, "tuner", "template/map", ok(2.0, 0.60, 0.02, "memory"));
        add(s, run, "tuner", "template/map", ok(1.9, 0.57, 0.02, "memory"));
        RunSummary r = summarize_run(s, run);
        QCOMPARE(r.outcome, RunOutcome::Improved);
        QCOMPARE(*r.best_id, best);
        QCOMPARE(r.bound_fraction, 0.60);
        QCOMPARE(r.reference_bound_fraction, 0.30);
        QCOMPARE(r.evals_to_90pct, 4);  // 1.5 < 0.9 * 2.0; the 4th evaluation reached it
        QVERIFY2(r.line().find("improved: candidate") == 0, r.line().c_str());
        QVERIFY2(r.line().find("60% of the measured copy bandwidth (memory-bound, reference at 30%)") != std::string::npos,
                 r.line().c_str());
        // The reference at 1.0x against its own timing: nothing said of noise, the JSON has it.
        QCOMPARE(r.reference_self_speedup, 1.0);
        QCOMPARE(r.to_json()["reference_self_speedup"].get<double>(), 1.0);
        QVERIFY2(r.line().find("against its own timing") == std::string::npos, r.line().c_str());
        // A higher bar turns the same run into "no improvement".
        QCOMPARE(summarize_run(s, run, 2.5).outcome, RunOutcome::NoImprovement);
        // Compute-bound kernels are measured against the FMA rate.
        auto run2 = s.add_run("t", nlohmann::json::object());
        add(s, run2, "seed", "reference", ok(1.0, 0.05, 0.20, "compute"));
        add(s, run2, "pattern", "gemm", ok(3.0, 0.10, 0.62, "compute"));
        RunSummary c = summarize_run(s, run2);
        QCOMPARE(c.bound_fraction, 0.62);
        QVERIFY2(c.line().find("62% of the measured FMA rate") != std::string::npos, c.line().c_str());
    }

    /** The reference measured far from 1x against its own timing: the line warns that the speedups carry that noise. */
    void reference_far_from_itself_is_reported_as_noise() {
        ProjectStore s = ProjectStore::create(kftest::temp_dir("summary-n"), "p");
        auto run = s.add_run("t", nlohmann::json::object());
        add(s, run, "seed", "reference", ok(1.18, 0.85, 0.01, "memory"));
        add(s, run, "tuner", "template/map", ok(1.53, 1.10, 0.01, "memory"));
        RunSummary r = summarize_run(s, run);
        QCOMPARE(r.outcome, RunOutcome::Improved);
        QCOMPARE(r.reference_self_speedup, 1.18);
        QVERIFY2(r.line().find("; the reference itself measured 1.18x against its own timing, noise of that size") !=
                     std::string::npos,
                 r.line().c_str());
        QCOMPARE(r.to_json()["reference_self_speedup"].get<double>(), 1.18);
        // No correct reference evaluation: nothing to compare with, and no field.
        auto run2 = s.add_run("t", nlohmann::json::object());
        add(s, run2, "seed", "reference", failed());
        add(s, run2, "tuner", "template/map", ok(1.53, 1.10, 0.01, "memory"));
        RunSummary r2 = summarize_run(s, run2);
        QVERIFY(r2.reference_self_speedup < 0);
        QVERIFY(!r2.to_json().contains("reference_self_speedup"));
        QVERIFY2(r2.line().find("against its own timing") == std::string::npos, r2.line().c_str());
    }

    /**
     * The best timed again side by side with the reference (kf::confirm_best's state): the
     * run improved only where that median too reaches min_gain; a best that fails when timed
     * again is no improvement; a reference that fails leaves the search's figure.
     */
    void confirmation_decides_with_the_search() {
        ProjectStore s = ProjectStore::create(kftest::temp_dir("summary-c"), "p");
        auto confirmed = [&](double search, const nlohmann::json& conf) {
            auto run = s.add_run("t", nlohmann::json::object());
            auto ref = add(s, run, "seed", "reference", ok(1.0, 0.80, 0.01, "memory"));
            auto best = add(s, run, "tuner", "template/map", ok(search, 0.80 * search, 0.01, "memory"));
            nlohmann::json c = conf;
            c["candidate"] = best;
            c["reference"] = ref;
            s.put_state(run, "confirmation", c);
            return std::make_pair(run, best);
        };
        const nlohmann::json rounds = nlohmann::json::array({{{"candidate", 1.30}, {"reference", 1.0}}});
        // Confirmed above the bar: improved, the line gives both figures.
        auto [r1, b1] = confirmed(1.53, {{"rounds", rounds}, {"speedup", 1.29}, {"search_speedup", 1.53}});
        RunSummary a = summarize_run(s, r1);
        QCOMPARE(a.outcome, RunOutcome::Improved);
        QCOMPARE(*a.best_id, b1);
        QCOMPARE(a.confirmed_speedup, 1.29);
        QCOMPARE(a.confirmed_rounds, 1);
        QVERIFY2(a.line().find("1.29x the reference timed again side by side (median of 1 round; 1.53x in the search)") !=
                     std::string::npos,
                 a.line().c_str());
        auto j = a.to_json();
        QCOMPARE(j["best"]["confirmed_speedup"].get<double>(), 1.29);
        QCOMPARE(j["confirmation"]["speedup"].get<double>(), 1.29);
        // Confirmed under the bar: no improvement, the candidate named with both figures.
        auto [r2, b2] = confirmed(1.10, {{"rounds", rounds}, {"speedup", 0.99}, {"search_speedup", 1.10}});
        RunSummary b = summarize_run(s, r2);
        QCOMPARE(b.outcome, RunOutcome::NoImprovement);
        QCOMPARE(*b.best_id, b2);
        QVERIFY2(b.line().find("measured 1.10x in the search but 0.99x timed again side by side (median of 1 round), "
                               "under the 1.02x needed") != std::string::npos,
                 b.line().c_str());
        // The search's figure under the bar: no improvement, whatever the rounds gave.
        auto [r3, b3] = confirmed(1.01, {{"rounds", rounds}, {"speedup", 1.20}, {"search_speedup", 1.01}});
        QCOMPARE(summarize_run(s, r3).outcome, RunOutcome::NoImprovement);
        // The best came out incorrect when timed again: no improvement.
        auto [r4, b4] = confirmed(1.60, {{"rounds", nlohmann::json::array()}, {"failed", "the best, timed again: incorrect"}, {"failed_by", "best"}});
        RunSummary d = summarize_run(s, r4);
        QCOMPARE(d.outcome, RunOutcome::NoImprovement);
        QVERIFY2(d.line().find("but timed again it failed (the best, timed again: incorrect)") != std::string::npos,
                 d.line().c_str());
        // The reference failed when timed again: the search's figure stands, and the line says so.
        auto [r5, b5] = confirmed(1.60, {{"rounds", nlohmann::json::array()}, {"failed", "the reference, timed again: timeout"}, {"failed_by", "reference"}});
        RunSummary e = summarize_run(s, r5);
        QCOMPARE(e.outcome, RunOutcome::Improved);
        QVERIFY2(e.line().find("; not timed again: the reference, timed again: timeout") != std::string::npos, e.line().c_str());
        // A confirmation of another candidate than the best is not this best's.
        auto [r6, b6] = confirmed(1.60, {{"rounds", rounds}, {"speedup", 0.5}});
        s.put_state(r6, "confirmation", {{"candidate", b6 + 1000}, {"speedup", 0.5}});
        QCOMPARE(summarize_run(s, r6).outcome, RunOutcome::Improved);
        QVERIFY(summarize_run(s, r6).confirmed_speedup < 0);
    }

    void nothing_correct() {
        ProjectStore s = ProjectStore::create(kftest::temp_dir("summary-c"), "p");
        auto run = s.add_run("t", nlohmann::json::object());
        add(s, run, "seed", "reference", failed());
        RunSummary r = summarize_run(s, run);
        QCOMPARE(r.outcome, RunOutcome::NoCorrect);
        QVERIFY(!r.best_id);
        QVERIFY(r.to_json()["best"].is_null());
    }
};

QTEST_GUILESS_MAIN(TestRunSummary)
#include "test_run_summary.moc"
