#include "runner_pool.h"

#include <chrono>
#include <cstdlib>
#include <string>

namespace kf::worker {

RunnerPool::~RunnerPool() { clear(); }

void RunnerPool::clear() {
    spare_.reset();
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

bool RunnerPool::same(const RunnerOptions& a, const RunnerOptions& b) {
    return a.worker == b.worker && a.backend == b.backend && a.device == b.device && a.sandbox == b.sandbox &&
           a.limits.memory_bytes == b.limits.memory_bytes && a.limits.file_bytes == b.limits.file_bytes &&
           a.limits.open_files == b.limits.open_files;
}

std::unique_ptr<RunnerProcess> RunnerPool::take(const RunnerOptions& opt) {
    std::unique_ptr<RunnerProcess> r;
    if (spare_ && same(spare_opt_, opt)) r = std::move(spare_);
    spare_.reset();  // started for other options: it ends here
    last_ = opt;
    if (ahead_ == Ahead::WhileEvaluating) start_spare(opt);
    if (!r) return std::make_unique<RunnerProcess>(opt);
    r->load(opt.library);  // waits for the rest of its set-up, if any
    return r;
}

void RunnerPool::prepare() {
    if (ahead_ == Ahead::AfterEvaluation && !spare_ && last_) start_spare(*last_);
}

void RunnerPool::start_spare(const RunnerOptions& opt) {
    RunnerOptions next = opt;
    next.library.clear();
    try {
        spare_ = std::make_unique<RunnerProcess>(next);
        spare_opt_ = next;
    } catch (...) {
        spare_.reset();  // the next evaluation starts one of its own and reports why
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

double RunnerPool::hush(bool settled) {
    // take(), retire() and hush() are called from one thread: nothing is retired meanwhile.
    if (settled) settle();
    if (!spare_) return 0;
    const auto t0 = std::chrono::steady_clock::now();
    return spare_->hold() ? std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() : 0;
}

void RunnerPool::settle() {
    if (reaper_.joinable()) reaper_.join();
    // Ahead::WhileEvaluating: the runner started ahead finishes setting itself up now, before
    // the calls whose times count, so that none of them runs while it makes its context.
    if (spare_ && ahead_ == Ahead::WhileEvaluating && spare_->setting_up()) {
        try {
            spare_->finish_setup();
        } catch (...) {
            spare_.reset();  // the next evaluation starts one of its own and reports why
        }
    }
}

bool RunnerPool::retiring() {
    std::lock_guard<std::mutex> lock(mu_);
    return reaping_;
}

void RunnerPool::unhush() {
    if (spare_) spare_->release();
}

}  // namespace kf::worker
