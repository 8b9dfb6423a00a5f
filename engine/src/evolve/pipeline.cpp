#include "kf/pipeline.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "kf/error.h"

namespace kf {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

struct PipelinedEvaluator::Impl {
    /** One device: its evaluator, its thread and what it has done. */
    struct Device {
        Evaluator* evaluator = nullptr;
        int ordinal = 0;
        int evaluations = 0;
        double busy = 0;
        bool out = false;        ///< taken out: its worker cannot be used any more
        std::string reason;
        std::thread thread;
    };

    Evaluator& evaluator;  ///< the main device's: compiles, and its device's evaluations
    const Task& task;
    const EvalOptions& opt;
    PipelineConfig cfg;
    unsigned threads = 1;

    mutable std::mutex mu;
    std::condition_variable cv;
    std::deque<Child> to_compile;
    struct Compiled {
        Child child;
        CompileResult result;
        Diagnosis diagnosis;
        int attempts = 0;  ///< devices that failed under it
    };
    std::deque<Compiled> to_evaluate;
    std::deque<std::pair<Child, Diagnosis>> done;
    std::shared_ptr<Wakeup> wakeup;  ///< told of every result (the search sleeps on it)
    int compiling = 0;
    int evaluating = 0;           ///< devices evaluating now
    bool intake_closed = false;  ///< cancel_waiting() in progress: compile threads take nothing new
    bool quit = false;
    int device_waiting = 0;       ///< exclusive evaluation: devices whose child waits for the compiles to end
    std::deque<Device> devices;   ///< the main device first; a deque keeps their addresses
    std::mutex profile_mu;        ///< the profiling policy's counters, shared by the devices

    Clock::time_point started = Clock::now();
    double device_busy = 0, device_starved = 0, compile_busy = 0;
    int evaluations = 0, compiles = 0;
    int correct = 0, profiles = 0, profile_skipped = 0;
    double profile_time = 0, best_fitness = 0;
    bool profiler_ok = false;

    /** Profiles d's candidate on `ev`'s device when the policy says so (device threads). */
    void maybe_profile(Evaluator& ev, const Child& c, Diagnosis& d) {
        if (!profiler_ok || d.status != Status::Ok) return;
        double expected = 0;
        {
            // The policy's counters only: devices profile their own children at the same time.
            std::lock_guard<std::mutex> plock(profile_mu);
            double fit = d.fitness();
            ++correct;
            bool new_best = cfg.profile_new_best && fit > best_fitness;
            best_fitness = std::max(best_fitness, fit);
            bool kth = cfg.profile_every > 0 && correct % cfg.profile_every == 0;
            if (!new_best && !kth) return;
            // The next profile is expected to cost what the others did on average: it runs only
            // if the share stays under the cap with it included. Its expected cost is counted
            // at once, so that profiles running on other devices meanwhile count too.
            expected = profiles ? profile_time / profiles : 0.0;
            if (profile_time + expected > cfg.profile_max_share * std::max(1.0, seconds_since(started))) {
                ++profile_skipped;
                return;
            }
            profile_time += expected;
            ++profiles;
        }
        auto t0 = Clock::now();
        try {
            Candidate cand;
            cand.source = apply_tunables(c.proposal.source, c.proposal.tunables);
            cand.name = "candidate_" + std::to_string(c.id);
            ev.profile_into(d, task, cand, cfg.profile_options);
        } catch (const std::exception& e) {
            d.profile = {{"available", false}, {"reason", std::string("profiling failed: ") + e.what()}};
        }
        std::lock_guard<std::mutex> plock(profile_mu);
        profile_time += seconds_since(t0) - expected;  // the measured cost replaces the expected one
    }

    std::vector<std::thread> compilers;

    Impl(Evaluator& e, const Task& t, const EvalOptions& o, PipelineConfig c) : evaluator(e), task(t), opt(o), cfg(c) {
        threads = cfg.compile_threads ? cfg.compile_threads : std::max(1u, std::thread::hardware_concurrency());
    }

    void compile_loop() {
        while (true) {
            Child c;
            {
                std::unique_lock<std::mutex> lock(mu);
                // With exclusive evaluation no compile starts while the device waits or works.
                cv.wait(lock, [&] {
                    return quit || (!intake_closed && !to_compile.empty() &&
                                    !(cfg.exclusive_evaluation && (evaluating > 0 || device_waiting > 0)));
                });
                if (quit) return;
                c = std::move(to_compile.front());
                to_compile.pop_front();
                ++compiling;
            }
            Compiled item;
            item.child = c;
            auto t0 = Clock::now();
            try {
                Candidate cand;
                cand.source = apply_tunables(c.proposal.source, c.proposal.tunables);
                cand.name = "candidate_" + std::to_string(c.id);
                item.result = evaluator.compile_stage(task, cand, opt, item.diagnosis);
            } catch (const std::exception& e) {
                item.result.ok = false;
                item.diagnosis.status = Status::CompileError;
                item.diagnosis.stage = Stage::Compile;
                item.diagnosis.message = std::string("not compiled: ") + e.what();
            }
            std::lock_guard<std::mutex> lock(mu);
            compile_busy += seconds_since(t0);
            ++compiles;
            --compiling;
            if (item.result.ok) {
                // The user's own kernels go to the device first.
                if (item.child.proposal.expert == "user") to_evaluate.push_front(std::move(item));
                else to_evaluate.push_back(std::move(item));
            } else {
                evaluator.finish(item.diagnosis);
                done.emplace_back(std::move(item.child), std::move(item.diagnosis));
                if (wakeup) wakeup->notify();
            }
            cv.notify_all();
        }
    }

    int active_devices() const {
        int n = 0;
        for (const auto& d : devices) n += d.out ? 0 : 1;
        return n;
    }

    void run_loop(Device& dev) {
        Evaluator& ev = *dev.evaluator;
        while (true) {
            Compiled item;
            {
                std::unique_lock<std::mutex> lock(mu);
                auto wait_start = Clock::now();
                bool starving = compiling > 0 || !to_compile.empty();
                cv.wait(lock, [&] { return quit || (!intake_closed && !to_evaluate.empty()); });
                if (starving && &dev == &devices.front()) device_starved += seconds_since(wait_start);
                if (quit) return;
                item = std::move(to_evaluate.front());
                to_evaluate.pop_front();
                if (cfg.exclusive_evaluation) {
                    ++device_waiting;
                    cv.wait(lock, [&] { return quit || (compiling == 0 && evaluating == 0); });
                    --device_waiting;
                    if (quit) return;
                }
                ++evaluating;
            }
            auto t0 = Clock::now();
            std::string failure;
            try {
                ev.evaluate_stage(task, item.result, opt, item.diagnosis, &failure);
            } catch (const Cancelled&) {
                item.diagnosis.status = Status::RuntimeError;
                item.diagnosis.message = "not evaluated: cancelled";
            } catch (const std::exception& e) {
                failure = e.what();
                item.diagnosis.status = Status::RuntimeError;
                item.diagnosis.message = std::string("not evaluated: ") + e.what();
            }
            const double busy = seconds_since(t0);
            {
                std::unique_lock<std::mutex> lock(mu);
                if (!failure.empty() && active_devices() > 1 && item.attempts < static_cast<int>(devices.size())) {
                    // This device is gone: its child goes to another, and it takes no more.
                    dev.out = true;
                    dev.reason = failure;
                    --evaluating;
                    ++item.attempts;
                    item.diagnosis = Diagnosis{};
                    to_evaluate.push_front(std::move(item));
                    cv.notify_all();
                    return;
                }
            }
            maybe_profile(ev, item.child, item.diagnosis);
            ev.finish(item.diagnosis);
            std::lock_guard<std::mutex> lock(mu);
            dev.busy += busy;
            ++dev.evaluations;
            device_busy += busy;
            ++evaluations;
            --evaluating;
            done.emplace_back(std::move(item.child), std::move(item.diagnosis));
            if (wakeup) wakeup->notify();
            cv.notify_all();
        }
    }
};

PipelinedEvaluator::PipelinedEvaluator(Evaluator& evaluator, const Task& task, const EvalOptions& opt, PipelineConfig cfg)
    : impl_(std::make_unique<Impl>(evaluator, task, opt, cfg)) {
    std::vector<Evaluator*> all = {&evaluator};
    for (Evaluator* e : cfg.more_devices)
        if (e && e != &evaluator) all.push_back(e);
    for (Evaluator* e : all) {
        e->prepare(task);
        Impl::Device d;
        d.evaluator = e;
        d.ordinal = e->worker().config().device;
        impl_->devices.push_back(std::move(d));
    }
    impl_->profiler_ok = cfg.profile && evaluator.profiler_available();
    for (unsigned i = 0; i < impl_->threads; ++i) impl_->compilers.emplace_back([this] { impl_->compile_loop(); });
    for (auto& d : impl_->devices) d.thread = std::thread([this, &d] { impl_->run_loop(d); });
}

PipelinedEvaluator::~PipelinedEvaluator() {
    {
        std::lock_guard<std::mutex> lock(impl_->mu);
        impl_->quit = true;
    }
    impl_->cv.notify_all();
    for (auto& t : impl_->compilers) t.join();
    for (auto& d : impl_->devices) d.thread.join();
}

int PipelinedEvaluator::capacity() const {
    return static_cast<int>(impl_->threads) + std::max(1, impl_->cfg.device_queue) * static_cast<int>(impl_->devices.size());
}

void PipelinedEvaluator::submit(const Child& c) {
    {
        std::lock_guard<std::mutex> lock(impl_->mu);
        if (c.proposal.expert == "user") impl_->to_compile.push_front(c);
        else impl_->to_compile.push_back(c);
    }
    impl_->cv.notify_all();
}

std::optional<std::pair<Child, Diagnosis>> PipelinedEvaluator::next(std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> lock(impl_->mu);
    if (!impl_->cv.wait_for(lock, wait, [&] { return !impl_->done.empty(); })) return std::nullopt;
    auto r = std::move(impl_->done.front());
    impl_->done.pop_front();
    return r;
}

std::vector<Child> PipelinedEvaluator::cancel_waiting() {
    std::unique_lock<std::mutex> lock(impl_->mu);
    impl_->intake_closed = true;
    impl_->cv.wait(lock, [&] { return impl_->compiling == 0; });
    std::vector<Child> out;
    for (auto& c : impl_->to_compile) out.push_back(std::move(c));
    for (auto& c : impl_->to_evaluate) out.push_back(std::move(c.child));
    impl_->to_compile.clear();
    impl_->to_evaluate.clear();
    impl_->intake_closed = false;
    return out;
}

bool PipelinedEvaluator::notify_results(std::shared_ptr<Wakeup> wakeup) {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->wakeup = std::move(wakeup);
    if (impl_->wakeup && !impl_->done.empty()) impl_->wakeup->notify();
    return true;
}

nlohmann::json PipelinedEvaluator::stats() const {
    std::lock_guard<std::mutex> lock(impl_->mu);
    const double wall = seconds_since(impl_->started);
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : impl_->devices)
        devices.push_back({{"device", d.ordinal},
                           {"evaluations", d.evaluations},
                           {"busy_s", d.busy},
                           {"per_minute", wall > 0 ? 60.0 * d.evaluations / wall : 0.0},
                           {"out", d.out},
                           {"reason", d.reason}});
    return {{"devices", devices},
            {"wall_s", wall},
            {"device_busy_s", impl_->device_busy},
            {"device_starved_s", impl_->device_starved},
            {"device_idle_s", std::max(0.0, seconds_since(impl_->started) - impl_->device_busy)},
            {"compile_busy_s", impl_->compile_busy},
            {"compile_threads", impl_->threads},
            {"evaluations", impl_->evaluations},
            {"compiles", impl_->compiles},
            {"exclusive_evaluation", impl_->cfg.exclusive_evaluation},
            {"profiles", impl_->profiles},
            {"profile_s", impl_->profile_time},
            {"profile_skipped", impl_->profile_skipped}};
}

}  // namespace kf
