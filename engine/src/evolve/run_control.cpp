#include "kf/run_control.h"

namespace kf {

std::uint64_t Wakeup::generation() const {
    std::lock_guard<std::mutex> lock(mu_);
    return generation_;
}

void Wakeup::notify() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        ++generation_;
    }
    cv_.notify_all();
}

bool Wakeup::wait(std::uint64_t seen, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return generation_ != seen; });
}

void RunControl::set_wakeup(std::shared_ptr<Wakeup> wakeup) {
    std::lock_guard<std::mutex> lock(mu_);
    wakeup_ = std::move(wakeup);
}

void RunControl::wake() {
    std::shared_ptr<Wakeup> w;
    {
        std::lock_guard<std::mutex> lock(mu_);
        w = wakeup_;
    }
    cv_.notify_all();
    if (w) w->notify();
}

void RunControl::request_stop() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
    }
    wake();
}

bool RunControl::stop_requested() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stop_;
}

void RunControl::set_paused(bool paused) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        paused_ = paused;
    }
    wake();
}

bool RunControl::paused() const {
    std::lock_guard<std::mutex> lock(mu_);
    return paused_;
}

void RunControl::wait_while_paused() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !paused_ || stop_ || !injections_.empty(); });
}

void RunControl::inject(Proposal proposal, int island) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        injections_.push_back({std::move(proposal), island});
    }
    wake();
}

std::vector<RunControl::Injection> RunControl::take_injections() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Injection> out;
    out.swap(injections_);
    return out;
}

}  // namespace kf
