#pragma once
// Runners started ahead of need (docs/sandbox.md, Cost): while a candidate is evaluated, the
// next runner is already starting in its sandbox, its device context and confinement set up,
// so that the next evaluation finds it waiting. A runner still serves one library only; a
// finished one is ended in the background. What a starting runner does on the device (its
// context, its allocations) is kept out of the calls the judge measures: it is stopped
// during each of them (hush) until it is set up.
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runner_process.h"

namespace kf::worker {

class RunnerPool {
public:
    /** `ahead`: keep one runner started ahead (KF_RUNNER_AHEAD=0 turns it off, to compare). */
    explicit RunnerPool(bool ahead) : ahead_(ahead) {}
    ~RunnerPool();
    RunnerPool(const RunnerPool&) = delete;
    RunnerPool& operator=(const RunnerPool&) = delete;

    /** A runner with `opt.library` loaded: the one started ahead where it was started with the
     *  same options, else a new one; then starts the next one ahead. Throws as RunnerProcess. */
    std::unique_ptr<RunnerProcess> take(const RunnerOptions& opt);
    /** take(), retire(), hush() and unhush() are called from one thread.
     *  Ends `r` in the background (its device context takes a while to go). */
    void retire(std::unique_ptr<RunnerProcess> r);
    /** Around a call the judge measures: the runner started ahead stands still while it is
     *  still setting up, and, with `settled`, runners being ended are gone first (a call that is
     *  not timed need not wait for them: what they give back of the device's memory is told
     *  apart by retiring()). */
    void hush(bool settled = true);
    void unhush();
    /** Waits until every runner being ended is gone. */
    void settle();
    /** Runners are being ended now (their device memory may come back at any moment). Until the
     *  next retire(), false stays false. */
    bool retiring();
    /** Ends the runner started ahead and waits for every runner being ended. */
    void clear();
    /** The starting runner of the environment's choice (KF_RUNNER_AHEAD, default on). */
    static bool ahead_from_environment();

private:
    static bool same(const RunnerOptions& a, const RunnerOptions& b);
    void reap();

    bool ahead_;
    std::unique_ptr<RunnerProcess> spare_;
    RunnerOptions spare_opt_;
    std::mutex mu_;
    std::vector<std::unique_ptr<RunnerProcess>> retiring_;
    bool reaping_ = false;  ///< the reaper thread runs (guarded by mu_)
    std::thread reaper_;
};

}  // namespace kf::worker
