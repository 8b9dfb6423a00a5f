#include "kf/run_control.h"

namespace kf {

void RunControl::request_stop() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
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
    cv_.notify_all();
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
    cv_.notify_all();
}

std::vector<RunControl::Injection> RunControl::take_injections() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Injection> out;
    out.swap(injections_);
    return out;
}

}  // namespace kf
