#pragma once
// What the judge sees of a runner process from outside (docs/sandbox.md): its threads, the
// processes it started, whether all of it is stopped, and its CPU time. Read from /proc and
// the process's CPU clock, never from anything the runner says.
#include <sys/types.h>

#include <ctime>
#include <string>
#include <vector>

namespace kf::worker {

/** A runner's threads and children at one moment. */
struct ThreadCensus {
    bool readable = false;  ///< /proc/<pid>/task could be listed
    int threads = 0;
    int children = 0;       ///< processes started by any of its threads
    bool all_stopped = true;
};

/** Counts the threads of `pid` and the children of each, and whether every thread is stopped. */
ThreadCensus take_census(pid_t pid);

/** True when `pid` no longer runs (no such process, or a zombie: its resources are released). */
bool process_gone(pid_t pid);

/** The only child of `pid` (bubblewrap's init starts the command as its child), or -1. */
pid_t only_child(pid_t pid);

/** The processes started by any thread of `pid` (empty where unreadable). */
std::vector<pid_t> children_of(pid_t pid);

/** CPU time of a whole process (every thread), through its CPU clock. */
class ProcessCpuClock {
public:
    explicit ProcessCpuClock(pid_t pid = -1);
    bool valid() const { return valid_; }
    /** Nanoseconds of CPU used so far, or -1 when unreadable. */
    long long ns() const;

private:
    clockid_t clock_{};
    bool valid_ = false;
};

/** What the judge measured of a candidate's runner over an evaluation. */
struct RunnerActivity {
    bool measured = false;      ///< threads were counted
    std::string note;           ///< why not, when not
    int baseline_threads = 0;   ///< before the library was loaded: main, OpenMP's pool, the driver's
    int max_threads = 0;        ///< the most seen after a call
    int max_children = 0;       ///< processes seen after a call
    bool cpu_measured = false;
    double call_cpu_ms = 0;     ///< CPU time used while it was let run, up to each time it was stopped
    double idle_cpu_ms = 0;     ///< CPU time used while it was stopped (should be none)
    double idle_cpu_max_ms = 0; ///< the most of it in one stop
    int stops = 0;              ///< times it was stopped and let run again
    int calls = 0;              ///< times its threads were counted
    bool quiet_waits = false;   ///< its waits for the device sleep: its CPU time per call is host work
};

}  // namespace kf::worker
