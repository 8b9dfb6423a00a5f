#pragma once
/**
 * Controls of a running search that another thread (the app, a signal handler's watcher)
 * may use while the engine thread runs it: stop, pause and resume, and inject a candidate
 * written by the user into an island. All members are thread-safe.
 */
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "kf/experts.h"

namespace kf {

/**
 * A wake-up call for a thread that waits for whichever comes first of several things (a
 * result, a stop request, a proposal): those who have news call notify(); the waiter reads
 * generation() before it looks for work and then waits for a later one, so that no call
 * made in between is missed. Thread-safe.
 */
class Wakeup {
public:
    std::uint64_t generation() const;
    void notify();
    /** Waits until notify() was called after `seen` was read or `timeout` passed; true when woken. */
    bool wait(std::uint64_t seen, std::chrono::milliseconds timeout);

private:
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::uint64_t generation_ = 0;
};

class RunControl {
public:
    /** Asks the run to stop: in-flight evaluations finish and are stored, nothing new starts. */
    void request_stop();
    bool stop_requested() const;

    /** While paused, no new child is proposed or evaluated; in-flight work still finishes. */
    void set_paused(bool paused);
    bool paused() const;
    /** Blocks while paused; returns at once when not paused or when a stop is requested. */
    void wait_while_paused();

    /** A candidate for island `island`, evaluated before the next proposals (author: user). */
    struct Injection {
        Proposal proposal;
        int island = 0;
    };
    void inject(Proposal proposal, int island);
    /** The injections queued since the last call (engine side). */
    std::vector<Injection> take_injections();

    /** Notified on every stop, pause, resume and injection (the search waits on it); may be null. */
    void set_wakeup(std::shared_ptr<Wakeup> wakeup);

private:
    void wake();

    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    bool paused_ = false;
    std::vector<Injection> injections_;
    std::shared_ptr<Wakeup> wakeup_;
};

}  // namespace kf
