// Runners started ahead of need (docs/sandbox.md, Cost): after the first evaluation of a
// worker, the next candidate's runner is already set up when the evaluation asks for it, and
// it still serves that one candidate only.
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <thread>
#include <chrono>

#include "kf/evaluator.h"
#include "testsupport.h"

using namespace kf;

class TestRunnerAhead : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<Evaluator> ev_;
    Task task_;

    /** A host evaluator of its own, compiling into the test's folder `cache`. */
    static std::unique_ptr<Evaluator> evaluator(const std::string& cache) {
        EvaluatorConfig cfg;
        cfg.worker.backend = Backend::Host;
        cfg.worker.worker = kftest::worker_path();
        cfg.cache_dir = kftest::temp_dir(cache) / "compile";
        return std::make_unique<Evaluator>(cfg);
    }

    Diagnosis run(const std::string& name) { return run(*ev_, name); }

    Diagnosis run(Evaluator& ev, const std::string& name) {
        Candidate c;
        c.source = kftest::read_file(kftest::data("candidates/host/" + name + ".cpp"));
        c.name = name;
        EvalOptions o;
        o.min_time_ms = 5;
        o.min_reps = 3;
        o.warmup = 1;
        o.timeout_s = 60;
        Diagnosis d = ev.evaluate(task_, c, o);
        qInfo("%s: %s: %s; runner %s", name.c_str(), std::string(to_string(d.status)).c_str(), d.message.c_str(),
              d.runner.dump().c_str());
        return d;
    }

    /** What the runners started ahead cost a series of evaluations (phases.site). */
    struct Holds {
        int holds = 0;          ///< calls that found runners started ahead setting up, summed
        int settled_holds = 0;  ///< of them, after settle(), summed
        int quiet = 0;          ///< evaluations after the first that stopped no runner and waited under `slow_ms` for none
    };

    /** `n` evaluations of the correct candidate on `ev`, `pause_ms` apart: each is ok, and each
     *  after the first found its runner started ahead. `slow_ms`: what waiting for a runner
     *  making its context takes at least (KF_RUNNER_SLOW_DEVICE_MS). */
    void evaluate_correct(Evaluator& ev, int n, Holds& out, double slow_ms = 1e9, int pause_ms = 0) {
        for (int i = 0; i < n; ++i) {
            if (i > 0 && pause_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
            Diagnosis d = run(ev, "correct");
            QCOMPARE(d.status, Status::Ok);
            if (i > 0) QVERIFY2(d.runner.value("ahead", false), d.runner.dump().c_str());
            const nlohmann::json site = d.phases.value("site", nlohmann::json::object());
            const double settle = site.value("settle_ms", 1e9), waited = d.runner.value("waited_ms", 1e9);
            qInfo("holds %d, settle %.0f ms, waited %.0f ms", site.value("holds", -1), settle, waited);
            out.holds += site.value("holds", 0);
            if (i > 0 && site.value("holds", -1) == 0 && settle < slow_ms && waited < slow_ms) ++out.quiet;
            out.settled_holds += site.value("settled_holds", -100);
        }
    }

private slots:
    void initTestCase() {
        EvaluatorConfig cfg;
        cfg.worker.backend = Backend::Host;
        cfg.worker.worker = kftest::worker_path();
        cfg.cache_dir = kftest::temp_dir("cache") / "compile";
        qputenv("KF_CACHE_DIR", QByteArray::fromStdString(cfg.cache_dir.string()));
        qunsetenv("KF_RUNNER_AHEAD");
        qunsetenv("KF_RUNNER_AHEAD_DEPTH");
        qunsetenv("KF_RUNNER_OPEN");
        qunsetenv("KF_RUNNER_SLOW_SETUP_MS");
        qunsetenv("KF_RUNNER_SLOW_DEVICE_MS");
        ev_ = std::make_unique<Evaluator>(cfg);
        task_ = load_task(kftest::data("tasks/scale_add"));
    }

    /** Every evaluation after the worker's first finds its runner started ahead. */
    void later_evaluations_find_their_runner_waiting() {
        for (int i = 0; i < 3; ++i) {
            Diagnosis d = run("correct");
            QCOMPARE(d.status, Status::Ok);
            QVERIFY2(d.runner.is_object(), "the diagnosis says nothing of the runner");
            QVERIFY(d.runner.value("waited_ms", -1.0) >= 0);
            QVERIFY(d.runner.value("setup_ms", -1.0) >= 0);
            // Its start step by step: the judge's fork to its main, then its own steps, which
            // are within its set-up.
            const nlohmann::json steps = d.runner.value("setup_steps", nlohmann::json::object());
            double own = 0;
            for (const char* k : {"spawn_ms", "device_ms", "threads_ms", "confine_ms"}) {
                QVERIFY2(steps.value(k, -1.0) >= 0, (std::string(k) + " in " + d.runner.dump()).c_str());
                if (std::string(k) != "spawn_ms") own += steps.value(k, 0.0);
            }
            QVERIFY2(own <= d.runner.value("setup_ms", 0.0) + 0.01, d.runner.dump().c_str());
            // The reference is timed in the first evaluation, in a runner of its own: from the
            // second evaluation on, every candidate's runner was started during the one before.
            if (i > 0) QVERIFY2(d.runner.value("ahead", false), d.runner.dump().c_str());
            // No timed call found the runner started during it still setting up.
            const nlohmann::json site = d.phases.value("site", nlohmann::json::object());
            QVERIFY2(site.value("calls", 0) > 0, d.phases.dump().c_str());
            QVERIFY2(site.contains("settled_holds"), d.phases.dump().c_str());
            QCOMPARE(site.value("settled_holds", -1), 0);
        }
    }

    /** Runners slow to start (KF_RUNNER_SLOW_SETUP_MS, as starting the CUDA driver is) and to
     *  make their device contexts (KF_RUNNER_SLOW_DEVICE_MS). By default the next one is
     *  started while a candidate is evaluated, starts its driver and waits before its device;
     *  it makes its context between requests or when taken, and the timed calls never find one
     *  setting up (settled_holds). With KF_RUNNER_AHEAD=after it sets itself up between
     *  evaluations: no call finds it. */
    void no_timed_call_finds_a_runner_setting_up() {
        qputenv("KF_RUNNER_SLOW_SETUP_MS", "400");
        qputenv("KF_RUNNER_SLOW_DEVICE_MS", "400");
        qputenv("KF_RUNNER_AHEAD_DEPTH", "1");
        for (const char* ahead : {"", "after"}) {
            if (*ahead) qputenv("KF_RUNNER_AHEAD", ahead);
            else qunsetenv("KF_RUNNER_AHEAD");
            std::unique_ptr<Evaluator> ev = evaluator(std::string("cache-slow-") + ahead);
            Holds h;
            evaluate_correct(*ev, 3, h);
            qunsetenv("KF_RUNNER_AHEAD");
            if (QTest::currentTestFailed()) break;
            QCOMPARE(h.settled_holds, 0);
            if (*ahead) QCOMPARE(h.holds, 0);
        }
        qunsetenv("KF_RUNNER_AHEAD_DEPTH");
        qunsetenv("KF_RUNNER_SLOW_SETUP_MS");
        qunsetenv("KF_RUNNER_SLOW_DEVICE_MS");
    }

    /** Runners are started KF_RUNNER_AHEAD_DEPTH at a time, when none is left, and make their
     *  contexts one after the other while the worker has no request: with time between
     *  requests for all of them, no evaluation after the first waits for a context or stops a
     *  runner, not even one that starts the next runners (where it waited for their contexts
     *  before its timed calls when they were made as soon as started). Contexts take 300 ms
     *  here, requests come 1.6 s apart: time for three. With KF_RUNNER_OPEN=idle: by default
     *  the evaluation that starts the next runners also opens the first of them (below). */
    void contexts_are_made_while_the_worker_is_idle() {
        qputenv("KF_RUNNER_SLOW_DEVICE_MS", "300");
        qputenv("KF_RUNNER_OPEN", "idle");
        for (const char* depth : {"3", "1"}) {
            qputenv("KF_RUNNER_AHEAD_DEPTH", depth);
            std::unique_ptr<Evaluator> ev = evaluator(std::string("cache-depth-") + depth);
            Holds h;
            evaluate_correct(*ev, 7, h, 200, 1600);
            if (QTest::currentTestFailed()) break;
            QCOMPARE(h.settled_holds, 0);
            qInfo("depth %s: %d of 6 evaluations waited for no runner and stopped none", depth, h.quiet);
            QCOMPARE(h.quiet, 6);
            if (QTest::currentTestFailed()) break;
        }
        qunsetenv("KF_RUNNER_OPEN");
        qunsetenv("KF_RUNNER_AHEAD_DEPTH");
        qunsetenv("KF_RUNNER_SLOW_DEVICE_MS");
    }

    /** A request that comes while a runner opened between requests is still making its
     *  context: the runner taken is ready, the one still making its context is stopped around
     *  that candidate's calls (holds) and waited for before its timed calls (settled_holds 0).
     *  Contexts take 1 s here and requests come 1.3 s apart: the second runner opened in a
     *  pause has about 700 ms left when the next request comes. */
    void a_runner_making_its_context_is_stopped_around_calls() {
        qputenv("KF_RUNNER_SLOW_DEVICE_MS", "1000");
        qputenv("KF_RUNNER_AHEAD_DEPTH", "3");
        std::unique_ptr<Evaluator> ev = evaluator("cache-stopped");
        Holds h;
        evaluate_correct(*ev, 7, h, 1e9, 1300);
        qunsetenv("KF_RUNNER_AHEAD_DEPTH");
        qunsetenv("KF_RUNNER_SLOW_DEVICE_MS");
        if (QTest::currentTestFailed()) return;
        QCOMPARE(h.settled_holds, 0);
        QVERIFY2(h.holds > 0, "no call found a runner opened between requests still making its context");
    }

    /** By default the runner next in line makes its context while the candidate just taken
     *  is evaluated: requests that come back to back (no idle worker to make contexts in) find
     *  their runners with their contexts made, where with KF_RUNNER_OPEN=idle each waits for
     *  its own (it is opened in the moment between requests, or when taken). Contexts take
     *  400 ms here; a runner waited under 250 ms for is counted as found ready. */
    void the_next_context_is_made_while_a_candidate_is_evaluated() {
        qputenv("KF_RUNNER_SLOW_DEVICE_MS", "400");
        qputenv("KF_RUNNER_AHEAD_DEPTH", "3");
        int ready[2] = {0, 0};  // [0] with KF_RUNNER_OPEN=idle, [1] by default
        for (int dflt = 0; dflt < 2; ++dflt) {
            if (!dflt) qputenv("KF_RUNNER_OPEN", "idle");
            std::unique_ptr<Evaluator> ev = evaluator(std::string("cache-open-") + (dflt ? "default" : "idle"));
            for (int i = 0; i < 6; ++i) {
                Diagnosis d = run(*ev, "correct");
                QCOMPARE(d.status, Status::Ok);
                const nlohmann::json site = d.phases.value("site", nlohmann::json::object());
                QCOMPARE(site.value("settled_holds", -1), 0);
                const double waited = d.runner.value("waited_ms", 1e9);
                qInfo("open %s: waited %.0f ms, holds %d", dflt ? "default" : "idle", waited, site.value("holds", -1));
                // The first evaluation starts a runner of its own and the second takes one
                // started during the first: from the third on each finds one started earlier.
                if (i >= 2 && waited < 250) ++ready[dflt];
            }
            qunsetenv("KF_RUNNER_OPEN");
        }
        qunsetenv("KF_RUNNER_AHEAD_DEPTH");
        qunsetenv("KF_RUNNER_SLOW_DEVICE_MS");
        qInfo("found ready: %d of 4 with KF_RUNNER_OPEN=idle, %d of 4 by default", ready[0], ready[1]);
        QCOMPARE(ready[1], 4);
        QVERIFY(ready[0] < 4);
    }

    /** A runner serves one library: a candidate that marks its process never finds the mark
     *  of an earlier candidate, however many came before it in the same worker. */
    void a_runner_serves_one_candidate() {
        for (int i = 0; i < 3; ++i) {
            Diagnosis d = run("stateful");
            QCOMPARE(d.status, Status::Ok);
        }
    }

    /** With KF_RUNNER_AHEAD=0 every runner is started when its candidate is known. */
    void ahead_can_be_turned_off() {
        qputenv("KF_RUNNER_AHEAD", "0");
        std::unique_ptr<Evaluator> ev = evaluator("cache-off");
        for (int i = 0; i < 2; ++i) {
            Diagnosis d = run(*ev, "correct");
            QCOMPARE(d.status, Status::Ok);
            QVERIFY(d.runner.is_object());
            QVERIFY(!d.runner.value("ahead", true));
        }
        qunsetenv("KF_RUNNER_AHEAD");
    }

    /** The runners' library folders go with the worker. */
    void folders_are_removed_with_the_worker() {
        namespace fs = std::filesystem;
        // This test's workers are its children; their folders are kf-worker-<pid>-*.
        std::vector<fs::path> ours;
        std::error_code ec;
        for (const auto& t : fs::directory_iterator("/proc/self/task", ec)) {
            std::ifstream in(t.path() / "children");
            long pid = 0;
            while (in >> pid)
                for (const auto& e : fs::directory_iterator(fs::temp_directory_path(), ec))
                    if (e.path().filename().string().rfind("kf-worker-" + std::to_string(pid) + "-", 0) == 0)
                        ours.push_back(e.path());
        }
        QVERIFY2(!ours.empty(), "no folder of this test's worker found");
        ev_.reset();  // the worker is told to shut down
        for (const auto& p : ours) QTRY_VERIFY_WITH_TIMEOUT(!fs::exists(p), 10000);
    }
};

QTEST_GUILESS_MAIN(TestRunnerAhead)
#include "test_runner_ahead.moc"
