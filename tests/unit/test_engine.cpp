// kf::Engine: one evaluator per device, shared by callers on several threads (a search and
// a hand evaluation in the app), whose evaluations queue on one worker process.
#include <QtTest>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "kf/engine.h"
#include "kf/pipeline.h"
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
        std::this_thread::sleep_for(std::chrono::milliseconds(800));  // the busy thread holds the device
        std::atomic<bool> cancel{false};
        EvalOptions opt;
        opt.time = false;
        opt.cancel = [&] { return cancel.load(); };
        std::thread waiter([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            cancel = true;
        });
        bool cancelled = false;
        auto t0 = std::chrono::steady_clock::now();
        try {
            (void)ev->evaluate(task, add, opt);
        } catch (const Cancelled&) {
            cancelled = true;
        }
        const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        waiter.join();
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
};

QTEST_GUILESS_MAIN(TestEngine)
#include "test_engine.moc"
