// kf::Engine: one evaluator per device, shared by callers on several threads (a search and
// a hand evaluation in the app), whose evaluations queue on one worker process.
#include <QtTest>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "kf/engine.h"
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
};

QTEST_GUILESS_MAIN(TestEngine)
#include "test_engine.moc"
