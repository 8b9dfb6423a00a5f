#include "runner_pool.h"
#include "kf/text.h"

#include <chrono>
#include <cstdlib>
#include <string>

namespace kf::worker {

RunnerPool::~RunnerPool() { clear(); }

void RunnerPool::clear() {
    spares_.clear();
    if (reaper_.joinable()) reaper_.join();
    retiring_.clear();
}

RunnerPool::Ahead RunnerPool::ahead_from_environment() {
    const char* v = std::getenv("KF_RUNNER_AHEAD");
    const std::string s = v ? v : "";
    if (s == "0") return Ahead::Off;
    if (s == "after") return Ahead::AfterEvaluation;
    return Ahead::WhileEvaluating;
}

int RunnerPool::depth_from_environment() {
    constexpr int kDefault = 4;
    const auto n = util::env_integer("KF_RUNNER_AHEAD_DEPTH");
    return (n && *n >= 1 && *n <= kMaxDepth) ? static_cast<int>(*n) : kDefault;
}

bool RunnerPool::open_next_from_environment() {
    const char* v = std::getenv("KF_RUNNER_OPEN");
    return !(v && std::string(v) == "idle");
}

bool RunnerPool::same(const RunnerOptions& a, const RunnerOptions& b) {
    return a.worker == b.worker && a.backend == b.backend && a.device == b.device && a.sandbox == b.sandbox &&
           a.limits.memory_bytes == b.limits.memory_bytes && a.limits.file_bytes == b.limits.file_bytes &&
           a.limits.open_files == b.limits.open_files;
}

std::unique_ptr<RunnerProcess> RunnerPool::take(const RunnerOptions& opt) {
    std::unique_ptr<RunnerProcess> r;
    if (!spares_.empty() && !same(spare_opt_, opt)) spares_.clear();  // started for other options: they end here
    if (!spares_.empty()) {
        r = std::move(spares_.front());
        spares_.pop_front();
    }
    last_ = opt;
    if (ahead_ == Ahead::WhileEvaluating && spares_.empty()) start_spares(opt);
    if (!r) r = std::make_unique<RunnerProcess>(opt);
    else r->load(opt.library);  // waits for the rest of its set-up, if any
    // Once this one is set up (the driver makes contexts one after the other), the next makes
    // its context while this candidate is evaluated: hush() stops it around this candidate's
    // calls, settle() waits for it before the timed ones.
    if (open_next_ && ahead_ == Ahead::WhileEvaluating && !spares_.empty()) spares_.front()->open_device();
    return r;
}

void RunnerPool::prepare() {
    if (ahead_ == Ahead::AfterEvaluation && spares_.empty() && last_) start_spares(*last_);
}

void RunnerPool::start_spares(const RunnerOptions& opt) {
    RunnerOptions next = opt;
    next.library.clear();
    spare_opt_ = next;
    // While a candidate is evaluated, they start their drivers and wait before their devices
    // until opened (the worker idle, open_while_idle(); the first of them by take() once its
    // own candidate's runner is set up; at the latest when their candidate takes them): until
    // then, correctness calls need not stop them.
    next.open_later = ahead_ == Ahead::WhileEvaluating;
    for (int i = 0; i < depth_; ++i) {
        try {
            spares_.push_back(std::make_unique<RunnerProcess>(next));
        } catch (...) {
            return;  // the evaluation that finds none starts one of its own and reports why
        }
    }
}

void RunnerPool::retire(std::unique_ptr<RunnerProcess> r) {
    if (!r) return;
    std::unique_lock<std::mutex> lock(mu_);
    retiring_.push_back(std::move(r));
    if (reaping_) return;
    reaping_ = true;
    lock.unlock();
    if (reaper_.joinable()) reaper_.join();  // a thread that has found nothing more to end
    reaper_ = std::thread([this] { reap(); });
}

void RunnerPool::reap() {
    for (;;) {
        std::unique_ptr<RunnerProcess> r;
        {
            std::lock_guard<std::mutex> lock(mu_);
            if (retiring_.empty()) {
                reaping_ = false;
                return;
            }
            r = std::move(retiring_.back());
            retiring_.pop_back();
        }
        r.reset();  // kills it and waits until it is gone
    }
}

RunnerPool::Hushed RunnerPool::hush(bool settled) {
    // take(), retire() and hush() are called from one thread: nothing is retired meanwhile.
    if (settled) settle();
    Hushed h;
    const auto t0 = std::chrono::steady_clock::now();
    for (auto& s : spares_)
        if (s->hold()) ++h.runners;
    if (h.runners > 0) h.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return h;
}

void RunnerPool::settle() {
    if (reaper_.joinable()) reaper_.join();
    // Ahead::WhileEvaluating: before the calls whose times count, no runner started ahead may
    // be starting its driver or making its context. Those opened finish now; the others wait
    // before their devices, with nothing there, until opened (open_while_idle(), take()) or
    // an evaluation takes them (load() opens it and waits). Contexts are made one at a time
    // (the driver makes them one after the other anyway), in the order the runners are taken.
    if (ahead_ != Ahead::WhileEvaluating) return;
    for (auto it = spares_.begin(); it != spares_.end();) {
        bool ok = true;
        try {
            (*it)->release();
            if ((*it)->opened()) (*it)->finish_setup();
            else (*it)->await_started();
        } catch (...) {
            ok = false;  // an evaluation that finds none left starts one of its own and reports why
        }
        it = ok ? std::next(it) : spares_.erase(it);
    }
}

bool RunnerPool::open_while_idle() {
    if (ahead_ != Ahead::WhileEvaluating) return false;
    for (auto& s : spares_) {
        if (s->opened()) {
            if (s->setting_up()) return true;  // making its context: the next waits for it
            continue;
        }
        s->open_device();
        return true;
    }
    return false;
}

bool RunnerPool::retiring() {
    std::lock_guard<std::mutex> lock(mu_);
    return reaping_;
}

void RunnerPool::unhush() {
    for (auto& s : spares_) s->release();
}

}  // namespace kf::worker
