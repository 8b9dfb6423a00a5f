// Steady-state scheduling of the search: an asynchronous queue kept full, experts that block
// on I/O run on their own threads, pause / inject / stop from another thread, and the real
// compile-and-evaluate pipeline on the host backend.
#include <QtTest>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "kf/evaluator.h"
#include "kf/pipeline.h"
#include "kf/run_control.h"
#include "kf/search.h"
#include "kf/task.h"
#include "kf/tunables.h"
#include "testsupport.h"

using namespace kf;

namespace {

const char* kTemplate =
    "#define VEC 1     // @kf tunable values(1, 2, 4, 8)\n"
    "#define BLOCK 64  // @kf tunable values(32, 64, 128, 256, 512)\n"
    "extern \"C\" void kf_solve() {}\n";

Diagnosis fake_evaluate(const Child& c) {
    Diagnosis d;
    d.status = Status::Ok;
    Assignment a = parse_tunables(kTemplate).defaults();
    for (const auto& [k, v] : c.proposal.tunables) a[k] = v;
    double fit = 1.0;
    if (c.proposal.source == kTemplate)
        fit = 3.0 - std::abs(std::log2(static_cast<double>(a["VEC"])) - 2) -
              0.5 * std::abs(std::log2(static_cast<double>(a["BLOCK"])) - 8);
    d.timing = Timing{};
    d.timing->speedup = std::max(0.1, fit);
    d.roofline = Roofline{};
    d.roofline->bound = "memory";
    return d;
}

std::vector<Proposal> seeds() {
    Proposal p;
    p.source = kTemplate;
    p.family = "template";
    p.expert = "seed";
    return {p};
}

SearchConfig config(int budget) {
    SearchConfig cfg;
    cfg.budget = budget;
    cfg.seed = 3;
    cfg.islands.islands = 2;
    cfg.islands.population = 6;
    return cfg;
}

/** Evaluates on a thread of its own, out of order, and records what was in flight. */
class ThreadedQueue : public EvaluationQueue {
public:
    explicit ThreadedQueue(int capacity) : capacity_(capacity), thread_([this] { loop(); }) {}
    ~ThreadedQueue() override {
        {
            std::lock_guard<std::mutex> l(mu_);
            quit_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }
    int capacity() const override { return capacity_; }
    void submit(const Child& c) override {
        std::lock_guard<std::mutex> l(mu_);
        waiting_.push_back(c);
        ++in_flight_;
        max_in_flight_ = std::max(max_in_flight_, in_flight_);
        if (returned_ > 0 && in_flight_ > 1) ++submits_while_busy_;
        cv_.notify_all();
    }
    std::optional<std::pair<Child, Diagnosis>> next(std::chrono::milliseconds wait) override {
        std::unique_lock<std::mutex> l(mu_);
        if (!cv_.wait_for(l, wait, [&] { return !done_.empty(); })) return std::nullopt;
        auto r = done_.front();
        done_.pop_front();
        --in_flight_;
        ++returned_;
        return r;
    }
    std::vector<Child> cancel_waiting() override {
        std::lock_guard<std::mutex> l(mu_);
        std::vector<Child> out(waiting_.begin(), waiting_.end());
        in_flight_ -= static_cast<int>(out.size());
        waiting_.clear();
        return out;
    }
    int max_in_flight() const { return max_in_flight_; }
    int submits_while_busy() const { return submits_while_busy_; }

private:
    void loop() {
        std::unique_lock<std::mutex> l(mu_);
        while (true) {
            cv_.wait(l, [&] { return quit_ || !waiting_.empty(); });
            if (quit_) return;
            // The newest first: results come back in another order than submitted.
            Child c = waiting_.back();
            waiting_.pop_back();
            l.unlock();
            // Simulates the evaluation's work (1 to 3 ms); nothing waits on it.
            std::this_thread::sleep_for(std::chrono::milliseconds(1 + c.id % 3));
            Diagnosis d = fake_evaluate(c);
            l.lock();
            done_.emplace_back(c, d);
            cv_.notify_all();
        }
    }
    int capacity_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Child> waiting_;
    std::deque<std::pair<Child, Diagnosis>> done_;
    int in_flight_ = 0, max_in_flight_ = 0, returned_ = 0, submits_while_busy_ = 0;
    bool quit_ = false;
    std::thread thread_;
};

/** A quick expert that never runs out of new kernels. */
class EndlessExpert : public Expert {
public:
    std::string name() const override { return "endless"; }
    std::map<DiagnosisClass, double> priors() const override { return {{DiagnosisClass::Memory, 3.0}}; }
    std::optional<Proposal> propose(const ProposalContext& ctx) override {
        Proposal p;
        p.source = "// ENDLESS " + std::to_string(++calls_) + "\nextern \"C\" void kf_solve() {}\n";
        p.family = "endless";
        p.expert = name();
        p.parents = {ctx.parent->id};
        return p;
    }
    int calls_ = 0;
};

/** An expert that waits (like an HTTP call) and proposes a new kernel each time. */
class SlowExpert : public Expert {
public:
    std::string name() const override { return "slow"; }
    bool blocking() const override { return true; }
    std::map<DiagnosisClass, double> priors() const override { return {{DiagnosisClass::Memory, 5.0}}; }
    std::optional<Proposal> propose(const ProposalContext& ctx) override {
        // Simulates the time an answer takes to come back; nothing waits on it.
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        threads_.fetch_add(std::this_thread::get_id() != main_ ? 1 : 0);
        calls_.fetch_add(1);
        if (ctx.tried || ctx.rng) shared_state_seen_ = true;
        Proposal p;
        p.source = "// SLOW " + std::to_string(calls_.load()) + "\nextern \"C\" void kf_solve() {}\n";
        p.family = "slow";
        p.expert = name();
        p.rationale = "waited for an answer";
        p.parents = {ctx.parent->id};
        return p;
    }
    std::thread::id main_ = std::this_thread::get_id();
    std::atomic<int> calls_{0}, threads_{0};
    std::atomic<bool> shared_state_seen_{false};
};

/** A waiting expert that takes a second to answer, the only one with anything to propose. */
class PatientExpert : public Expert {
public:
    std::string name() const override { return "patient"; }
    bool blocking() const override { return true; }
    std::map<DiagnosisClass, double> priors() const override { return {{DiagnosisClass::Memory, 5.0}}; }
    std::optional<Proposal> propose(const ProposalContext& ctx) override {
        busy_ = true;
        // Simulates a second's work, which the test times the search against; nothing waits on it.
        std::this_thread::sleep_for(std::chrono::seconds(1));
        busy_ = false;
        Proposal p;
        p.source = "// PATIENT " + std::to_string(++calls_) + "\nextern \"C\" void kf_solve() {}\n";
        p.family = "patient";
        p.expert = name();
        p.parents = {ctx.parent->id};
        return p;
    }
    std::atomic<bool> busy_{false};
    std::atomic<int> calls_{0};
};

}  // namespace

class TestScheduling : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { qputenv("KF_CACHE_DIR", kftest::temp_dir("sched-cache").string().c_str()); }

    void queue_is_kept_full_and_results_taken_as_they_come() {
        auto queue = std::make_shared<ThreadedQueue>(4);
        SearchHooks h;
        h.queue = queue;
        std::vector<std::int64_t> order;
        h.on_result = [&](const Child& c, const Diagnosis&) { order.push_back(c.id); };
        Search s(config(18), {}, h);
        s.add_seeds(seeds());
        SearchResult r = s.run();
        QCOMPARE(r.evaluations, 18);
        QCOMPARE(static_cast<int>(order.size()), 18);
        QCOMPARE(queue->max_in_flight(), 4);           // never more than the capacity...
        QVERIFY(queue->submits_while_busy() > 8);     // ...and refilled while others still run
        QVERIFY(!std::is_sorted(order.begin(), order.end()));  // results taken in completion order
        QVERIFY(r.best && r.best->fitness > 2.0);
    }

    void blocking_expert_runs_on_its_own_thread() {
        auto slow = std::make_shared<SlowExpert>();
        std::vector<std::string> evaluated_experts;
        SearchHooks h;
        h.evaluate = [&](const std::vector<Child>& batch) {
            std::vector<Diagnosis> out;
            for (const auto& c : batch) {
                evaluated_experts.push_back(c.proposal.expert);
                out.push_back(fake_evaluate(c));
            }
            return out;
        };
        Search s(config(16), {}, h);
        s.add_expert(slow);
        s.add_seeds(seeds());
        SearchResult r = s.run();
        QCOMPARE(r.evaluations, 16);
        QVERIFY(slow->calls_.load() >= 1);
        QCOMPARE(slow->threads_.load(), slow->calls_.load());  // never on the search's thread
        QVERIFY(!slow->shared_state_seen_.load());             // no access to the search's own state
        int from_slow = static_cast<int>(std::count(evaluated_experts.begin(), evaluated_experts.end(), "slow"));
        QVERIFY(from_slow >= 1);
        QVERIFY(from_slow < 16);  // the built-in experts kept working meanwhile
        QVERIFY(s.router().stats(DiagnosisClass::Memory, "slow").tries + s.router().stats(DiagnosisClass::Latency, "slow").tries >= 1);
    }

    void search_sleeps_while_only_a_waiting_expert_works() {
        // Nothing but the patient expert can propose (the seed has no tunables, there is no
        // pattern and no task for the templates): while it works, the search has nothing to
        // do and sleeps until it answers, looking at its stop predicate only now and then
        // (a loop that slept 20 ms at a time looked 50 times a second).
        auto patient = std::make_shared<PatientExpert>();
        std::atomic<int> polls_while_busy{0};
        SearchHooks h;
        h.evaluate = [](const std::vector<Child>& batch) {
            std::vector<Diagnosis> out;
            for (const auto& c : batch) out.push_back(fake_evaluate(c));
            return out;
        };
        h.should_stop = [&] {
            if (patient->busy_) ++polls_while_busy;
            return false;
        };
        SearchConfig cfg = config(3);
        cfg.islands.islands = 1;
        Search s(cfg, {}, h);
        s.add_expert(patient);
        Proposal seed;
        seed.source = "extern \"C\" void kf_solve() {}\n";
        seed.family = "plain";
        seed.expert = "seed";
        s.add_seeds({seed});
        QElapsedTimer clock;
        clock.start();
        SearchResult r = s.run();
        QCOMPARE(r.evaluations, 3);
        QCOMPARE(patient->calls_.load(), 2);
        QVERIFY2(polls_while_busy.load() <= 2 * 6, std::to_string(polls_while_busy.load()).c_str());  // 200 ms polls
        // Woken by the answers, not by a timer: the run takes the experts' two seconds, little more.
        QVERIFY2(clock.elapsed() < 2 * 1000 + 600, std::to_string(clock.elapsed()).c_str());
    }

    void pause_inject_and_stop_from_another_thread() {
        RunControl control;
        control.set_paused(true);
        std::atomic<int> evaluations{0};
        std::vector<std::string> experts;
        std::mutex mu;
        SearchHooks h;
        h.control = &control;
        h.evaluate = [&](const std::vector<Child>& batch) {
            std::vector<Diagnosis> out;
            for (const auto& c : batch) {
                std::lock_guard<std::mutex> l(mu);
                experts.push_back(c.proposal.expert);
                out.push_back(fake_evaluate(c));
                ++evaluations;
            }
            return out;
        };
        std::vector<EventKind> kinds;
        h.on_event = [&](const SearchEvent& e) {
            std::lock_guard<std::mutex> l(mu);
            kinds.push_back(e.kind);
        };
        Search s(config(0), {}, h);  // no budget and an endless expert: only a stop ends it
        s.add_expert(std::make_shared<EndlessExpert>());
        s.add_seeds(seeds());
        SearchResult result;
        std::thread t([&] { result = s.run(); });
        // The search says it is paused before it would submit anything: from then on, nothing
        // is evaluated but what the user injects.
        const auto reported = [&](EventKind kind) {
            std::lock_guard<std::mutex> l(mu);
            return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
        };
        QTRY_VERIFY_WITH_TIMEOUT(reported(EventKind::Paused), 5000);
        QCOMPARE(evaluations.load(), 0);  // paused from the start: nothing evaluated
        Proposal mine;
        mine.source = std::string(kTemplate) + "// edited\n";
        mine.family = "template";
        mine.expert = "user";
        mine.rationale = "edited by the user";
        control.inject(mine, 1);
        QTRY_COMPARE_WITH_TIMEOUT(evaluations.load(), 1, 5000);  // the user's kernel runs even while paused
        {
            std::lock_guard<std::mutex> l(mu);
            QCOMPARE(experts.front(), std::string("user"));
            QCOMPARE(experts.size(), std::size_t(1));  // and nothing else while paused
        }
        control.set_paused(false);
        QTRY_VERIFY_WITH_TIMEOUT(evaluations.load() > 5, 5000);
        control.request_stop();
        t.join();
        QCOMPARE(to_string(result.stop_reason), std::string("stopped on request"));
        QCOMPARE(result.stop_reason.kind, StopKind::Requested);
        std::lock_guard<std::mutex> l(mu);
        QVERIFY(std::find(kinds.begin(), kinds.end(), EventKind::Paused) != kinds.end());
        QVERIFY(std::find(kinds.begin(), kinds.end(), EventKind::Resumed) != kinds.end());
    }

    void pipeline_compiles_and_evaluates_on_the_host() {
        Task task = load_task(kftest::data("tasks/scale_add"));
        EvaluatorConfig ec;
        ec.worker.backend = Backend::Host;
        ec.worker.worker = kftest::worker_path();
        Evaluator ev(ec);
        EvalOptions opt;
        opt.trials = 1;
        opt.min_time_ms = 5;
        PipelineConfig pc;
        pc.compile_threads = 2;
        pc.exclusive_evaluation = true;
        PipelinedEvaluator queue(ev, task, opt, pc);
        QCOMPARE(queue.capacity(), 4);
        std::string good = kftest::read_file(task.references.at(Backend::Host));
        for (int i = 0; i < 4; ++i) {
            Child c;
            c.id = i + 1;
            c.proposal.source = i == 2 ? std::string("this is not C++\n") : good + "// variant " + std::to_string(i) + "\n";
            c.proposal.expert = "tuner";
            queue.submit(c);
        }
        std::map<std::int64_t, Diagnosis> result;
        for (int k = 0; k < 4; ++k) {
            auto r = queue.next(std::chrono::seconds(120));
            QVERIFY(r);
            result[r->first.id] = r->second;
        }
        QCOMPARE(result.size(), std::size_t{4});
        QCOMPARE(result[3].status, Status::CompileError);
        for (std::int64_t id : {1, 2, 4}) QVERIFY2(result[id].status == Status::Ok, result[id].message.c_str());
        nlohmann::json st = queue.stats();
        QCOMPARE(st["evaluations"].get<int>(), 3);
        QCOMPARE(st["compiles"].get<int>(), 4);
        QVERIFY(st["device_busy_s"].get<double>() > 0);
        // Cancelling hands back what has not started; an empty queue gives nothing back.
        QVERIFY(queue.cancel_waiting().empty());
        QVERIFY(!queue.next(std::chrono::milliseconds(50)));
    }
};

QTEST_GUILESS_MAIN(TestScheduling)
#include "test_scheduling.moc"
