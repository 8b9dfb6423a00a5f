// The whole loop on the host backend: seeds, routing, experts, real compiles and worker
// evaluations, the project store, and resuming a run killed with SIGKILL.
#include <QtTest>

#include <sched.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "kf/evolution.h"
#include "kf/experts.h"
#include "kf/process.h"
#include "kf/recognise.h"
#include "kf/run_summary.h"
#include "kf/store.h"
#include "kf/tunables.h"
#include "testsupport.h"

using namespace kf;

namespace {

/** The CPU model, the cores this process may use, a cgroup's CPU quota (if any) and AVX-512. */
std::string host_description() {
    std::string model = "unknown CPU";
    bool avx512 = false;
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string l; std::getline(cpuinfo, l);) {
        if (l.rfind("model name", 0) == 0 && l.find(':') != std::string::npos)
            model = l.substr(l.find(':') + 2);
        if (l.rfind("flags", 0) == 0) {
            avx512 = l.find(" avx512f") != std::string::npos;
            break;  // the first processor's lines are enough
        }
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    const int usable = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
    std::string quota = "none";
    std::ifstream cpu_max("/sys/fs/cgroup/cpu.max");
    if (std::getline(cpu_max, quota) && quota.rfind("max", 0) == 0) quota = "none";
    return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " CPUs, " + std::to_string(usable) +
           " usable, cgroup CPU quota " + quota + (avx512 ? ", AVX-512" : ", no AVX-512");
}

}  // namespace

class TestEvolve : public QObject {
    Q_OBJECT

private:
    std::filesystem::path cache_;
    /** What writes_kernels_from_scratch measured, per task with a margin: best speedup (the
     *  median of the rounds timed again where it was short in the search), the fastest of
     *  those rounds, margin, summary line. */
    struct ScratchResult {
        double best = 0, fastest_round = 0, margin = 0;
        std::string line;
    };
    std::map<std::string, ScratchResult> scratch_;

    EvaluatorConfig host_config() const {
        EvaluatorConfig cfg;
        cfg.worker.backend = Backend::Host;
        cfg.worker.worker = kftest::worker_path();
        cfg.cache_dir = cache_ / "compile";
        return cfg;
    }
    static EvolveOptions quick(int budget) {
        EvolveOptions o;
        o.search.budget = budget;
        o.search.islands.islands = 2;
        o.search.seed = 3;
        o.eval.min_time_ms = 50;
        o.eval.min_reps = 3;
        o.eval.warmup = 1;
        o.eval.trials = 2;
        o.seed_library = kftest::source_dir() / "resources" / "library" / "seed.json";
        return o;
    }

private slots:
    void initTestCase() {
        cache_ = kftest::temp_dir("evolve-cache");
        qputenv("KF_CACHE_DIR", QByteArray::fromStdString((cache_ / "compile").string()));
        qputenv("KF_RESOURCES_DIR", QByteArray::fromStdString((kftest::source_dir() / "resources").string()));
        qputenv("XDG_DATA_HOME", QByteArray::fromStdString(kftest::temp_dir("evolve-data").string()));
        // The speedups below depend on the host: say which one measured them.
        qInfo("host: %s", host_description().c_str());
    }

    /** What the store keeps of a child, for evolve and kernelbench run alike. */
    void candidate_record_of_a_child() {
        Child c;
        c.proposal.source = "#define BLOCK 128\n";
        c.proposal.tunables = {{"BLOCK", 256}};
        c.proposal.expert = "tuner";
        c.proposal.family = "softmax/warp";
        c.proposal.rationale = "BLOCK 128 -> 256";
        c.proposal.parents = {4, 7};
        c.island = 2;
        c.generation = 5;
        c.route.reason = "occupancy: prior favours tuner";
        CandidateRecord r = candidate_record(c, 3, "level1/softmax");
        QCOMPARE(r.run_id, std::int64_t(3));
        QCOMPARE(r.task, std::string("level1/softmax"));
        QCOMPARE(r.source, c.proposal.source);
        QCOMPARE(r.content_hash, proposal_key(c.proposal.source, c.proposal.tunables));
        QVERIFY(r.content_hash != proposal_key(c.proposal.source, {}));
        QCOMPARE(r.expert, std::string("tuner"));
        QCOMPARE(r.family, std::string("softmax/warp"));
        QCOMPARE(r.rationale, std::string("BLOCK 128 -> 256 [route: occupancy: prior favours tuner]"));
        QCOMPARE(r.island, 2);
        QCOMPARE(r.generation, 5);
        QCOMPARE(r.tunables, c.proposal.tunables);
        QCOMPARE(r.parents, c.proposal.parents);
        QCOMPARE(r.author, std::string("engine"));
        c.proposal.expert = "user";
        c.route.reason.clear();
        r = candidate_record(c, 3, "level1/softmax");
        QCOMPARE(r.author, std::string("user"));
        QCOMPARE(r.rationale, std::string("BLOCK 128 -> 256"));
    }

    /**
     * The best is timed again side by side with the reference once the search has ended:
     * every round's two speedups and their median ratio are kept in the run's state; a best
     * that passed in the search but is wrong when timed again is reported as failing.
     */
    void confirms_the_best_side_by_side() {
        Task t = load_task(kftest::data("tasks/scale_add"));
        Evaluator ev(host_config());
        ProjectStore store = ProjectStore::create(kftest::temp_dir("confirm-project"), "p");
        EvalOptions eval = quick(1).eval;
        auto record = [&](std::int64_t run, const std::string& expert, const std::string& family, const std::string& source,
                          double speedup) {
            CandidateRecord c;
            c.run_id = run;
            c.task = t.name;
            c.source = source;
            c.expert = expert;
            c.family = family;
            std::int64_t id = store.add_candidate(c);
            Diagnosis d;  // as the search recorded it
            d.status = Status::Ok;
            d.timing = Timing{};
            d.timing->speedup = speedup;
            store.add_evaluation(id, d);
            return id;
        };
        const std::string ref_src = kftest::read_file(t.dir / "reference.cpp");
        const std::string fast_src = kftest::read_file(kftest::data("candidates/host/correct.cpp"));
        const std::string wrong_src = kftest::read_file(kftest::data("candidates/host/wrong.cpp"));

        auto run = store.add_run(t.name, nlohmann::json::object());
        const std::int64_t ref = record(run, "seed", "reference", ref_src, 1.0);
        record(run, "tuner", "scale_add/slow", fast_src + "\n// a second copy\n", 1.2);
        const std::int64_t best = record(run, "tuner", "scale_add/omp", fast_src, 1.5);
        std::optional<nlohmann::json> conf = confirm_best(t, ev, store, run, eval, 3);
        QVERIFY(conf);
        qInfo("%s", conf->dump().c_str());
        QCOMPARE((*conf)["candidate"].get<std::int64_t>(), best);
        QCOMPARE((*conf)["reference"].get<std::int64_t>(), ref);
        QVERIFY2(!conf->contains("failed"), conf->dump().c_str());
        QCOMPARE((*conf)["rounds"].size(), std::size_t(3));
        std::vector<double> ratios;
        for (const auto& r : (*conf)["rounds"]) {
            QVERIFY(r["candidate"].get<double>() > 0 && r["reference"].get<double>() > 0);
            ratios.push_back(r["candidate"].get<double>() / r["reference"].get<double>());
        }
        std::sort(ratios.begin(), ratios.end());
        QCOMPARE((*conf)["speedup"].get<double>(), ratios[1]);
        QCOMPARE(store.get_state(run, "confirmation")->dump(), conf->dump());
        bool logged = false;
        for (const auto& e : store.events(run)) logged = logged || e.kind == EventKind::Confirmation;
        QVERIFY(logged);

        // Wrong when timed again: the rounds stop, and why is kept.
        auto run2 = store.add_run(t.name, nlohmann::json::object());
        record(run2, "seed", "reference", ref_src, 1.0);
        record(run2, "tuner", "scale_add/wrong", wrong_src, 2.0);
        conf = confirm_best(t, ev, store, run2, eval, 3);
        QVERIFY(conf);
        QVERIFY2(conf->value("failed", std::string()).rfind("the best, timed again: incorrect", 0) == 0, conf->dump().c_str());
        QCOMPARE(conf->value("failed_by", std::string()), std::string("best"));
        QVERIFY((*conf)["rounds"].empty());
        QCOMPARE(summarize_run(ProjectView(store), run2).outcome, RunOutcome::NoImprovement);

        // Nothing faster than the reference in the search, or no rounds asked: nothing done.
        auto run3 = store.add_run(t.name, nlohmann::json::object());
        record(run3, "seed", "reference", ref_src, 1.0);
        record(run3, "tuner", "scale_add/omp", fast_src, 0.97);
        QVERIFY(!confirm_best(t, ev, store, run3, eval, 3));
        QVERIFY(!confirm_best(t, ev, store, run, eval, 0));
        QVERIFY(!store.get_state(run3, "confirmation"));
    }

    void improves_on_bundled_host_tasks_data() {
        QTest::addColumn<QString>("task");
        QTest::addColumn<int>("budget");
        QTest::newRow("softmax") << "level1/softmax" << 14;
        // matmul's seeds include a cache-blocked kernel that is often the fastest from the start;
        // the tuner's children of it are timed within the host's noise of it. Its budget leaves
        // room for the lineages of the slower seeds and templates, whose tuned children beat
        // them: at 14 a fresh-clone run once saw no child beat its parent.
        QTest::newRow("matmul") << "level1/matmul" << 20;
    }

    void improves_on_bundled_host_tasks() {
        QFETCH(QString, task);
        QFETCH(int, budget);
        Task t = load_task(kftest::task(task.toStdString()));
        auto patterns = load_seed_patterns(kftest::source_dir() / "resources" / "library" / "seed.json", t, Backend::Host);
        if (patterns.empty()) QSKIP("no host patterns in the seed library for this task");
        Evaluator ev(host_config());
        ProjectStore store = ProjectStore::create(kftest::temp_dir("evolve-project"), "p");
        EvolveOutcome out = evolve(t, ev, store, quick(budget));
        QVERIFY(out.result.best);
        qInfo("%s: best %.2fx by %s (%s), %d evaluations, %s", t.name.c_str(), out.result.best->fitness,
              out.result.best->expert.c_str(), out.result.best->family.c_str(), out.result.evaluations,
              to_string(out.result.stop_reason).c_str());
        // It improves on the reference, and what it reports as best is correct.
        QVERIFY(out.result.best->fitness > 1.0);
        auto best = store.best(out.run_id);
        QVERIFY(best);
        QCOMPARE(best->second.status, std::string("ok"));
        QCOMPARE(static_cast<int>(store.evaluations(out.run_id).size()), out.result.evaluations);
        QVERIFY(store.unevaluated(out.run_id).empty());
        // The best was timed again side by side with the reference once the search ended.
        auto conf = store.get_state(out.run_id, "confirmation");
        QVERIFY(conf);
        QCOMPARE(conf->value("candidate", std::int64_t{0}), best->first.id);
        QVERIFY2(conf->contains("speedup") || conf->contains("failed"), conf->dump().c_str());
        // The search itself improved something: an expert's child beat its parent, as the
        // store's lineage and evaluations tell (not only a seed that was fast from the start).
        std::string improved, lineage;
        for (const auto& c : store.candidates(out.run_id)) {
            if (c.expert == "seed" || c.parents.empty()) continue;
            auto child = store.evaluation_of(c.id);
            auto parent = store.evaluation_of(c.parents.front());
            lineage += QString::asprintf("\n  %d by %s (%s): %s %.3fx, parent %d %.3fx", int(c.id), c.expert.c_str(),
                                         c.family.c_str(), child ? child->status.c_str() : "not evaluated",
                                         child ? child->fitness : 0.0, int(c.parents.front()),
                                         parent ? parent->fitness : 0.0)
                           .toStdString();
            if (improved.empty() && child && parent && child->status_value() == Status::Ok &&
                child->fitness > parent->fitness)
                improved = c.expert + " (candidate " + std::to_string(c.id) + ")";
        }
        QVERIFY2(!improved.empty(), ("no expert's child beat its parent:" + lineage).c_str());
        qInfo("%s: a child of %s beat its parent", t.name.c_str(), improved.c_str());
    }

    void writes_kernels_from_scratch_data() {
        QTest::addColumn<QString>("task");
        QTest::addColumn<double>("margin");
        // No library pattern for these tasks: the kernels come from the op-class templates,
        // from the manifest's computation (row_max, matvec) or one derived from the reference (sigmoid).
        QTest::newRow("row_max") << "row_max" << 1.5;
        // matvec is memory-bound: on a two-core machine its two-thread template measured 1.36x
        // to 1.6x over the one-thread reference, so its margin sits below that spread.
        QTest::newRow("matvec") << "matvec" << 1.25;
        QTest::newRow("sigmoid (derived)") << "sigmoid" << 1.15;
        // The naive transpose reads down the input's columns; blocks keep both sides in cache.
        QTest::newRow("scaled_transpose") << "scaled_transpose" << 1.5;
        // The naive GEMM walks down B's columns; the template streams B's rows through SIMD.
        QTest::newRow("linear_tanh") << "linear_tanh" << 1.5;
        // A running maximum: the naive reference is one thread; the template runs rows on every core.
        QTest::newRow("row_cummax") << "row_cummax" << 1.2;
        // A 3 x 3 stencil with its edges from a border expression. Its naive reference is one
        // thread, but GCC vectorises it on AVX-512 hosts (-O3 -march=native), where it is at
        // the memory bound on its own and only a second core is left to gain (measured 0.90x
        // to 1.67x); on AVX2 hosts it stays scalar (3.6x to 5.4x). No margin, then: the search
        // must write a correct stencil kernel. The padded stencils below, whose references no
        // x86 target vectorises, carry the speed margins.
        QTest::newRow("blur3x3") << "blur3x3" << 0.0;
        // Integer keys counted into buckets: the naive reference is one thread.
        QTest::newRow("bucket_count") << "bucket_count" << 1.2;
        // Columns: the naive reference walks down each column (a cache line per element).
        QTest::newRow("col_std") << "col_std" << 1.5;
        // A depthwise convolution (weights per channel read at an index, zero padding): the
        // naive reference checks the bounds of every tap.
        // Measured 3.3x to 4.9x (on one core 3.27x).
        QTest::newRow("dwconv1d") << "dwconv1d" << 2.0;
        // Replicate padding: the naive reference clamps every neighbour's coordinates
        // (measured 3.19x; on one core 2.08x; 2.04x on a 2-core AVX-512 host, where the
        // template's OpenMP team, before it ran small layouts on one thread, made 0.27x to 0.38x).
        QTest::newRow("smooth_clamp") << "smooth_clamp" << 1.5;
        // Residual add and LayerNorm: the naive reference's float sums do not vectorise
        // (measured 2.72x to 2.83x; on one core 1.57x).
        QTest::newRow("add_layernorm") << "add_layernorm" << 1.2;
        // A running sum down columns: the naive reference walks down each column (a cache line
        // per element); the template walks the rows of blocks of columns.
        QTest::newRow("col_cumsum") << "col_cumsum" << 1.5;
        // The manifest's computation removed: the recogniser derives it from the reference (through
        // libclang where it loads), and the search writes its kernels from that.
        QTest::newRow("col_std (derived)") << "col_std:derived" << 1.5;
        QTest::newRow("dwconv1d (derived)") << "dwconv1d:derived" << 2.0;
    }

    void writes_kernels_from_scratch() {
        QFETCH(QString, task);
        QFETCH(double, margin);
        const bool derive = task.endsWith(":derived");
        if (derive) task.chop(static_cast<int>(std::string(":derived").size()));
        Task t = load_task(kftest::data("tasks/" + task.toStdString()));
        if (derive) {
            std::string no_clang;
            if (!libclang_available(&no_clang)) {
                // Under ctest, where the build found libclang's header, it must load.
                if (qEnvironmentVariableIsSet("KF_EXPECT_LIBCLANG")) QFAIL(("libclang does not load: " + no_clang).c_str());
                QSKIP(("these shapes are derived through libclang: " + no_clang).c_str());
            }
            t.computation.reset();
            std::string why;
            std::optional<Computation> c = task_computation(t, Backend::Host, &why);
            QVERIFY2(c, why.c_str());
            QVERIFY2(c->origin.find("(libclang)") != std::string::npos, c->origin.c_str());
        }
        QVERIFY(load_seed_patterns(kftest::source_dir() / "resources" / "library" / "seed.json", t, Backend::Host).empty());
        Evaluator ev(host_config());
        ProjectStore store = ProjectStore::create(kftest::temp_dir("evolve-scratch"), "p");
        EvolveOutcome out = evolve(t, ev, store, quick(5));
        QVERIFY(out.result.best);
        RunSummary s = summarize_run(store, out.run_id);
        qInfo("%s: %s", t.name.c_str(), s.line().c_str());
        // The template expert wrote a kernel the worker judged correct.
        std::optional<CandidateRecord> fastest;  // its fastest correct one
        double speedup = 0, fastest_round = 0;
        for (const auto& c : store.candidates(out.run_id)) {
            auto e = store.evaluation_of(c.id);
            if (c.family.rfind("template/", 0) != 0 || !e || e->status_value() != Status::Ok) continue;
            if (!fastest || e->fitness > speedup) fastest = c, speedup = e->fitness;
        }
        QVERIFY2(fastest, s.line().c_str());
        if (margin <= 0) return;  // correct is what this task asks here (above)
        // What is reported as best is correct, whatever its speed.
        auto best = store.best(out.run_id);
        QVERIFY(best);
        QCOMPARE(best->second.status, std::string("ok"));
        if (speedup < margin) {
            // Short of its margin in the search: time the template's fastest kernel against
            // the reference again, side by side, three times, and keep the median, so that a
            // measurement disturbed during the search is told from a kernel that is too slow.
            Assignment chosen;
            for (const auto& [k, v] : fastest->tunables.items()) chosen[k] = v.get<std::int64_t>();
            Candidate cand;
            cand.source = apply_tunables(fastest->source, chosen);
            cand.name = "remeasured";
            EvalOptions opt = quick(5).eval;
            opt.min_time_ms = 200;
            std::vector<double> again;
            for (int i = 0; i < 3; ++i) {
                Diagnosis d = ev.evaluate(t, cand, opt);
                QCOMPARE(d.status, Status::Ok);
                QVERIFY(d.timing);
                again.push_back(d.timing->speedup);
            }
            std::sort(again.begin(), again.end());
            qInfo("%s: %.2fx in the search, short of %.2fx; timed again: %.2fx, %.2fx, %.2fx", t.name.c_str(), speedup,
                  margin, again[0], again[1], again[2]);
            speedup = again[1];
            fastest_round = again[2];
        } else {
            fastest_round = speedup;
        }
        scratch_[t.name] = {speedup, fastest_round, margin, s.line()};
    }

    /**
     * The template expert's kernels reach their speed margins on the tasks above. A margin
     * holds on one host and not on another: a naive reference the host's compiler
     * vectorises, or a second core that is not free while it is timed, takes a task's gain
     * away (on CI, blur3x3 at 0.90x in one run and smooth_clamp at 0.90x in another, each
     * the only task short of its margin, against 2.15x to 9.78x here). A task short of its
     * margin in the search is timed again (above); one still short is reported and
     * tolerated, two fail, as does any kernel at less than half the reference's speed in
     * each of its three rounds. One round at half or more is enough there: a kernel that
     * slow is slow in every round, while a host whose second core is taken makes a
     * two-thread kernel slow in some rounds only (on CI, dwconv1d's stencil measured 1.62x in
     * its search, then 0.28x, 0.33x and 0.93x timed again).
     */
    void templates_reach_their_margins() {
        if (scratch_.empty()) QSKIP("writes_kernels_from_scratch did not run (a single test function was asked for)");
        std::vector<std::string> short_of;
        for (const auto& [name, r] : scratch_) {
            if (r.best >= r.margin) continue;
            short_of.push_back(name + " (" + std::to_string(r.best) + "x, margin " + std::to_string(r.margin) + "x): " + r.line);
            QVERIFY2(r.fastest_round >= 0.5, ("far below its reference in every round: " + short_of.back()).c_str());
        }
        for (const auto& m : short_of) qWarning("short of its margin: %s", m.c_str());
        std::string all;
        for (const auto& m : short_of) all += "\n  " + m;
        QVERIFY2(short_of.size() <= 1, ("more than one task short of its margin:" + all).c_str());
    }

    void resumes_after_kill_9() {
        auto project = kftest::temp_dir("evolve-kill");
        const int budget = 12;
        std::string task = kftest::data("tasks/scale_add").string();
        std::vector<std::string> argv = {kftest::cli_path().string(), "evolve", task, "--project", project.string(),
                                         "--backend", "host", "--islands", "2", "--budget", std::to_string(budget),
                                         "--min-time", "5", "--trials", "1", "--seed", "5"};
        pid_t pid = fork();
        if (pid == 0) {
            setpgid(0, 0);
            int devnull = open("/dev/null", O_WRONLY);
            dup2(devnull, 1);
            std::vector<char*> args;
            for (auto& a : argv) args.push_back(a.data());
            args.push_back(nullptr);
            execv(args[0], args.data());
            _exit(127);
        }
        // Kill it once a few evaluations are committed.
        std::set<std::int64_t> before;
        const auto committed = [&] {
            if (!std::filesystem::exists(project / "project.db")) return false;
            try {
                ProjectStore s = ProjectStore::open(project);
                auto runs = s.runs();
                return !runs.empty() && s.evaluations(runs.front().id).size() >= 4;
            } catch (const Error&) {
                return false;  // not fully created yet
            }
        };
        if (kftest::wait_until(committed, std::chrono::minutes(1), std::chrono::milliseconds(100))) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        QVERIFY2(WIFSIGNALED(status), "the run finished before it could be killed");
        {
            ProjectStore s = ProjectStore::open(project);
            auto run = s.runs().front();
            QCOMPARE(run.state, RunState::Running);
            for (const auto& c : s.candidates(run.id)) before.insert(c.id);
            QVERIFY(s.evaluations(run.id).size() < static_cast<std::size_t>(budget));
        }
        auto r = run_process({kftest::cli_path().string(), "evolve", task, "--project", project.string(), "--backend", "host",
                              "--resume", "--min-time", "5", "--trials", "1"},
                             std::chrono::minutes(5));
        // 0, or 6 when no candidate beat the reference by --min-gain: scale_add's reference
        // is already near the copy bandwidth, so either may happen; the resume is what counts.
        QVERIFY2(r.exit_code == 0 || r.exit_code == 6, r.output.c_str());
        ProjectStore s = ProjectStore::open(project);
        auto run = s.runs().front();
        QCOMPARE(s.runs().size(), std::size_t(1));
        QCOMPARE(run.state, RunState::Done);
        auto cands = s.candidates(run.id);
        std::set<std::int64_t> after;
        std::set<std::string> kernels;
        for (const auto& c : cands) {
            after.insert(c.id);
            QVERIFY2(kernels.insert(c.content_hash).second, "a kernel was evaluated twice");
        }
        for (auto id : before) QVERIFY(after.count(id));  // nothing committed was lost
        QCOMPARE(static_cast<int>(s.evaluations(run.id).size()), budget);
        QVERIFY(s.unevaluated(run.id).empty());

        // The project's results through the CLI: runs, best, export; and the library the run fed.
        auto cli = [](std::vector<std::string> args) {
            args.insert(args.begin(), kftest::cli_path().string());
            return run_process(args, std::chrono::minutes(1));
        };
        auto runs = cli({"runs", "--project", project.string()});
        QCOMPARE(runs.exit_code, 0);
        QVERIFY(runs.output.find("scale_add") != std::string::npos);
        auto best = cli({"best", "--project", project.string(), "--json"});
        QCOMPARE(best.exit_code, 0);
        auto bj = nlohmann::json::parse(best.output.substr(best.output.find('{')));
        QVERIFY(bj["fitness"].get<double>() > 0);
        auto out = kftest::temp_dir("evolve-export");
        auto exp = cli({"export", "--project", project.string(), "--out", out.string()});
        QVERIFY2(exp.exit_code == 0, exp.output.c_str());
        QVERIFY(std::filesystem::exists(out / "scale_add.cpp"));
        QVERIFY(std::filesystem::exists(out / "kf_task.h"));
        QVERIFY(kftest::read_file(out / "report.md").find("## Lineage") != std::string::npos);
        auto lib = cli({"library", "export"});
        QCOMPARE(lib.exit_code, 0);
        auto lj = nlohmann::json::parse(lib.output.substr(lib.output.find('{')));
        QVERIFY(lj.contains("improvements"));
        QVERIFY(!lj["improvements"].empty());  // the librarian saw the children of the resumed run
    }
};

QTEST_GUILESS_MAIN(TestEvolve)
#include "test_evolve.moc"
