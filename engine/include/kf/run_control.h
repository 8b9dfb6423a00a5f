#pragma once
/**
 * Controls of a running search that another thread (the app, a signal handler's watcher)
 * may use while the engine thread runs it: stop, pause and resume, and inject a candidate
 * written by the user into an island. All members are thread-safe.
 */
#include <condition_variable>
#include <mutex>
#include <vector>

#include "kf/experts.h"

namespace kf {

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

private:
    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    bool paused_ = false;
    std::vector<Injection> injections_;
};

}  // namespace kf
