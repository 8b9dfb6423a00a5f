// kf::Engine: one evaluator per device, shared by callers on several threads (a search and
// a hand evaluation in the app), whose evaluations queue on one worker process; the runs and
// hand evaluations it owns, from the store connection to the run's end; read-only views.
#include <QtTest>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "kf/engine.h"
#include "kf/error.h"
#include "kf/pipeline.h"
#include "kf/store.h"
#include "kf/task.h"
#include "testsupport.h"

using namespace kf;

class TestEngine : public QObject {
    Q_OBJECT

    std::filesystem::path cache_;

    EvaluatorConfig config(int device = 0) const {
        EvaluatorConfig cfg;
        cfg.worker.backend = Backend::Host;
        cfg.worker.device = device;
        cfg.worker.worker = kftest::worker_path();
        cfg.cache_dir = cache_;
        return cfg;
    }

private slots:
    void initTestCase() {
        cache_ = kftest::temp_dir("engine-cache") / "compile";
        qputenv("KF_CACHE_DIR", QByteArray::fromStdString(cache_.string()));
        qputenv("KF_SANDBOX", "off");
    }

    void one_evaluator_per_device() {
        Engine engine;
        auto a = engine.evaluator(config());
        EvaluatorConfig other_threads = config();
        other_threads.compile_threads = 1;  // not part of what picks the evaluator
        auto b = engine.evaluator(other_threads);
        QCOMPARE(a.get(), b.get());
        auto c = engine.evaluator(config(1));
        QVERIFY(c.get() != a.get());
        QCOMPARE(engine.evaluators(), std::size_t(2));
    }

    /** Two threads on two tasks through one evaluator: every verdict right (each against
     *  its own task's reference), one worker process throughout. */
    void concurrent_callers_share_one_worker() {
        Engine engine;
        std::shared_ptr<Evaluator> ev = engine.evaluator(config());
        const Task scale_add = load_task(kftest::data("tasks/scale_add"));
        const Task sigmoid = load_task(kftest::data("tasks/sigmoid"));
        Candidate add{kftest::read_file(kftest::data("candidates/host/correct.cpp")), "correct"};
        Candidate sig{kftest::read_file(kftest::data("tasks/sigmoid/reference.cpp")), "sigmoid_copy"};
        Candidate wrong{kftest::read_file(kftest::data("candidates/host/wrong.cpp")), "wrong"};
        EvalOptions opt;
        opt.trials = 2;
        opt.time = false;
        std::vector<Status> first, second;
        std::thread search([&] {
            for (int i = 0; i < 4; ++i) first.push_back(ev->evaluate(scale_add, i % 2 ? wrong : add, opt).status);
        });
        std::thread hand([&] {
            for (int i = 0; i < 4; ++i) second.push_back(engine.evaluator(config())->evaluate(sigmoid, sig, opt).status);
        });
        search.join();
        hand.join();
        QCOMPARE(first.size(), std::size_t(4));
        QCOMPARE(second.size(), std::size_t(4));
        for (int i = 0; i < 4; ++i) {
            QCOMPARE(first[static_cast<std::size_t>(i)], i % 2 ? Status::Incorrect : Status::Ok);
            QCOMPARE(second[static_cast<std::size_t>(i)], Status::Ok);
        }
        QCOMPARE(ev->worker().restarts(), 0);
        QCOMPARE(engine.evaluators(), std::size_t(1));
    }

    /** A candidate named like a template instance ("rows-group/warp") or a path compiles
     *  and runs: its name is not taken as a folder of the compile's scratch directory. */
    void candidate_names_with_slashes_compile() {
        Engine engine;
        std::shared_ptr<Evaluator> ev = engine.evaluator(config());
        const Task scale_add = load_task(kftest::data("tasks/scale_add"));
        const std::string src = kftest::read_file(kftest::data("candidates/host/correct.cpp"));
        EvalOptions opt;
        opt.trials = 1;
        opt.time = false;
        for (const std::string name : {"rows-group/warp", "../outside", "a b/c.d", ""}) {
            CompileResult r = ev->compile(scale_add, Candidate{src + "// " + name + "\n", name});
            std::string why = name + ": " + r.info.log;
            for (const auto& d : r.info.diagnostics) why += " " + d.message;
            QVERIFY2(r.ok, why.c_str());
            QCOMPARE(ev->evaluate(scale_add, Candidate{src, name}, opt).status, Status::Ok);
        }
    }

    /** A caller waiting for the device gives up when its evaluation is cancelled. */
    void cancel_while_waiting_for_the_device() {
        Engine engine;
        std::shared_ptr<Evaluator> ev = engine.evaluator(config());
        const Task task = load_task(kftest::data("tasks/scale_add"));
        Candidate slow{kftest::read_file(kftest::data("candidates/host/infinite_loop.cpp")), "infinite_loop"};
        Candidate add{kftest::read_file(kftest::data("candidates/host/correct.cpp")), "correct"};
        (void)ev->compile(task, add);
        (void)ev->compile(task, slow);
        EvalOptions hold;
        hold.time = false;
        hold.timeout_s = 3;
        std::thread busy([&] { (void)ev->evaluate(task, slow, hold); });
        // The busy thread holds the device once its candidate runs: this engine's worker is
        // new, so a runner of it exists only from then on.
        QTRY_VERIFY_WITH_TIMEOUT(kftest::descendants_with_arg("--runner", "kfoundry-work") >= 1, 60000);
        EvalOptions opt;
        opt.time = false;
        // Polled every 50 ms while the evaluation waits for the device: the third poll is a
        // cancel while waiting.
        std::atomic<int> polls{0};
        opt.cancel = [&] { return ++polls >= 3; };
        bool cancelled = false;
        auto t0 = std::chrono::steady_clock::now();
        try {
            (void)ev->evaluate(task, add, opt);
        } catch (const Cancelled&) {
            cancelled = true;
        }
        const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        busy.join();
        QVERIFY2(cancelled, "the waiting evaluation was not cancelled");
        QVERIFY2(waited < 2.5, qPrintable(QString("it waited %1 s").arg(waited)));
    }

    /** A run's evaluations spread over several devices' workers; a device whose worker
     *  cannot start is taken out and its child evaluated on another. */
    void evaluations_spread_over_devices() {
        Engine engine;
        std::shared_ptr<Evaluator> d0 = engine.evaluator(config(0));
        std::shared_ptr<Evaluator> d1 = engine.evaluator(config(1));
        EvaluatorConfig broken = config(2);
        broken.worker.worker = kftest::temp_dir("no-worker") / "kfoundry-worker";  // not there
        std::shared_ptr<Evaluator> d2 = engine.evaluator(broken);
        const Task task = load_task(kftest::data("tasks/scale_add"));
        EvalOptions opt;
        opt.trials = 1;
        opt.time = false;
        PipelineConfig pc;
        pc.compile_threads = 2;
        pc.more_devices = {d1.get(), d2.get()};
        PipelinedEvaluator queue(*d0, task, opt, pc);
        const std::string good = kftest::read_file(kftest::data("candidates/host/correct.cpp"));
        const int n = 9;
        for (int i = 0; i < n; ++i) {
            Child c;
            c.id = i + 1;
            c.proposal.source = good + "// variant " + std::to_string(i) + "\n";
            c.proposal.expert = "tuner";
            queue.submit(c);
        }
        for (int k = 0; k < n; ++k) {
            auto r = queue.next(std::chrono::seconds(120));
            QVERIFY(r);
            QVERIFY2(r->second.status == Status::Ok, r->second.message.c_str());
        }
        const nlohmann::json devices = queue.stats()["devices"];
        qInfo().noquote() << QString::fromStdString(devices.dump());
        QCOMPARE(devices.size(), std::size_t(3));
        QCOMPARE(devices[0]["evaluations"].get<int>() + devices[1]["evaluations"].get<int>(), n);
        QVERIFY(devices[0]["evaluations"].get<int>() > 0);
        QVERIFY(devices[1]["evaluations"].get<int>() > 0);
        QVERIFY(!devices[0]["out"].get<bool>() && !devices[1]["out"].get<bool>());
        QVERIFY(devices[2]["out"].get<bool>());
        QCOMPARE(devices[2]["evaluations"].get<int>(), 0);
        QVERIFY(!devices[2]["reason"].get<std::string>().empty());
    }

    static SearchRequest search_request(const std::filesystem::path& project, const EvaluatorConfig& cfg) {
        SearchRequest r;
        r.project = project;
        r.create_project = true;
        r.task = load_task(kftest::data("tasks/scale_add"));
        r.evaluator = cfg;
        r.options.search.budget = 4;
        r.options.search.islands.islands = 1;
        r.options.search.seed = 3;
        r.options.eval.trials = 1;
        r.options.eval.min_time_ms = 20;
        r.options.eval.min_reps = 2;
        r.options.eval.warmup = 1;
        r.options.seed_library = kftest::source_dir() / "resources" / "library" / "seed.json";
        return r;
    }

    /** The engine runs a search to its end through its own store connection: the caller
     *  hears of the run, reads each evaluation through a view, and finds the run done. */
    void run_search_owns_the_run() {
        Engine engine;
        const auto project = kftest::temp_dir("engine-run") / "p";
        std::int64_t announced = 0;
        int evaluated = 0, seen_in_view = 0;
        SearchCallbacks cb;
        cb.on_run = [&](std::int64_t run, bool resumed) {
            QVERIFY(!resumed);
            announced = run;
        };
        cb.on_event = [&](const SearchEvent& e, const ProjectView& view) {
            if (e.kind != EventKind::Evaluated && e.kind != EventKind::Seeded) return;
            ++evaluated;
            // What the event reports is committed: the view reads it back.
            if (view.candidate(e.member) && view.evaluation_of(e.member)) ++seen_in_view;
        };
        EvolveOutcome out = engine.run_search(search_request(project, config()), cb);
        QVERIFY(announced > 0);
        QCOMPARE(out.run_id, announced);
        QVERIFY(evaluated > 0);
        QCOMPARE(seen_in_view, evaluated);
        const ProjectView view = ProjectView::open(project);
        QCOMPARE(view.run(out.run_id)->state, RunState::Done);
        QCOMPARE(static_cast<int>(view.evaluations(out.run_id).size()), out.result.evaluations);
    }

    /** A search that throws leaves its run "failed" with the error's text, not "running". */
    void a_failed_search_is_marked_failed() {
        Engine engine;
        const auto project = kftest::temp_dir("engine-fail") / "p";
        std::int64_t run = 0;
        SearchCallbacks cb;
        cb.on_run = [&](std::int64_t id, bool) { run = id; };
        cb.on_event = [](const SearchEvent& e, const ProjectView&) {
            if (e.kind == EventKind::Seeded) throw Error("the caller broke down");
        };
        QVERIFY_THROWS_EXCEPTION(Error, engine.run_search(search_request(project, config()), cb));
        QVERIFY(run > 0);
        const auto r = ProjectView::open(project).run(run);
        QVERIFY(r);
        QCOMPARE(r->state, RunState::Failed);
        QVERIFY2(r->stop_reason.find("the caller broke down") != std::string::npos, r->stop_reason.c_str());
    }

    /** A device that does not answer stops the search before anything is stored. */
    void no_device_before_anything_is_stored() {
        Engine engine;
        const auto project = kftest::temp_dir("engine-nodevice") / "p";
        EvaluatorConfig broken = config(3);
        broken.worker.worker = kftest::temp_dir("no-worker-2") / "kfoundry-worker";  // not there
        QVERIFY_THROWS_EXCEPTION(NoDevice, engine.run_search(search_request(project, broken)));
        QVERIFY(!std::filesystem::exists(project / "project.kfproj"));
    }

    /** Views read; every write through a read-only connection fails, and the file is unchanged. */
    void views_are_read_only() {
        const auto dir = kftest::temp_dir("engine-view") / "p";
        {
            ProjectStore store = ProjectStore::create(dir, "p");
            store.add_run("t", nlohmann::json::object());
        }
        ProjectStore reader = ProjectStore::open_read_only(dir);
        QCOMPARE(reader.runs().size(), std::size_t(1));
        QVERIFY_THROWS_EXCEPTION(StoreError, reader.add_run("t", nlohmann::json::object()));
        QVERIFY_THROWS_EXCEPTION(StoreError, reader.set_run_state(1, RunState::Done));
        const ProjectView view = ProjectView::open(dir);
        QCOMPARE(view.runs().size(), std::size_t(1));
        QCOMPARE(view.run(1)->state, RunState::Running);
        QVERIFY_THROWS_EXCEPTION(StoreError, ProjectView::open(kftest::temp_dir("engine-view-none")));
    }

    /** A hand-edited kernel is evaluated on the device's shared evaluator and stored as the
     *  user's child of the candidate; a cancelled one leaves nothing behind. */
    void hand_evaluation_is_stored_as_the_users() {
        Engine engine;
        const auto project = kftest::temp_dir("engine-hand") / "p";
        EvolveOutcome out = engine.run_search(search_request(project, config()));
        const ProjectView view = ProjectView::open(project);
        const CandidateRecord parent = view.candidates(out.run_id).front();
        const std::size_t before = view.candidates(out.run_id).size();

        HandEvaluation edit;
        edit.project = project;
        edit.task = load_task(kftest::data("tasks/scale_add"));
        edit.parent = parent;
        edit.source = kftest::read_file(kftest::data("candidates/host/correct.cpp")) + "// edited\n";
        edit.rationale = "edited in a test";
        edit.evaluator = config();
        edit.options.trials = 1;
        edit.options.time = false;
        HandEvaluationResult r = engine.evaluate_by_hand(edit);
        QVERIFY(!r.cancelled);
        QCOMPARE(r.diagnosis.status, Status::Ok);
        const auto child = view.candidate(r.candidate);
        QVERIFY(child);
        QCOMPARE(child->author, std::string("user"));
        QCOMPARE(child->expert, std::string("user"));
        QCOMPARE(child->parents, std::vector<std::int64_t>{parent.id});
        QCOMPARE(child->family, parent.family);
        QVERIFY(view.evaluation_of(r.candidate));
        QCOMPARE(engine.evaluators(), std::size_t(1));  // the search's worker, not a second one

        edit.source += "// cancelled\n";
        edit.cancelled = [] { return true; };
        QVERIFY(engine.evaluate_by_hand(edit).cancelled);
        QCOMPARE(view.candidates(out.run_id).size(), before + 1);
    }

    /** Profiles go through the engine too: evaluated on the shared evaluator, then profiled
     *  where a profiler exists (the host backend has none, and says so). */
    void profiles_through_the_engine() {
        Engine engine;
        CandidateProfile req;
        req.task = load_task(kftest::data("tasks/scale_add"));
        req.candidate = {kftest::read_file(kftest::data("candidates/host/correct.cpp")), "correct"};
        req.evaluator = config();
        req.eval.trials = 1;
        req.eval.time = false;
        std::vector<std::string> stages;
        req.on_stage = [&](const std::string& s) { stages.push_back(s); };
        Diagnosis d = engine.profile(req);
        QCOMPARE(d.status, Status::Ok);
        QCOMPARE(stages, (std::vector<std::string>{"evaluating", "profiling"}));
        QVERIFY(d.profile.is_object());
        QCOMPARE(d.profile.value("available", true), false);
        QCOMPARE(d.profile.value("code", std::string()), std::string("backend"));
        QCOMPARE(engine.evaluators(), std::size_t(1));
        req.evaluator.worker.worker = kftest::temp_dir("no-worker-3") / "kfoundry-worker";
        QVERIFY_THROWS_EXCEPTION(NoDevice, engine.profile(req));
    }
};

QTEST_GUILESS_MAIN(TestEngine)
#include "test_engine.moc"
