#pragma once
// The judge's handle on a runner: a sandboxed child process that loads one library (a
// candidate, or the reference for timing) and calls its entry point on tensor sets in an
// Arena (shared host memory, or shared device memory on CUDA) when told to. Everything it
// could fake (its output, its timing, a reply) is either read by the judge itself or bounded
// by the judge's own clock.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "loaded_libraries.h"
#include "runner_activity.h"
#include "runner_protocol.h"
#include "sandbox.h"
#include "shared_arena.h"

namespace kf::worker {

struct RunnerOptions {
    std::filesystem::path worker;   ///< this executable (started again with --runner)
    std::filesystem::path library;  ///< the shared object to load (empty: started ahead, load() names it)
    std::filesystem::path stage_root;  ///< where its library's folder is made (empty: the temporary folder)
    SandboxLimits limits;
    bool sandbox = true;            ///< run it under bubblewrap when bubblewrap is usable
    std::string backend = "host";   ///< "cuda": the runner opens device `device` and maps device memory
    int device = 0;
    int load_timeout_s = 60;
    /** Started ahead, it starts its driver and then waits before its device until open_device() (or
     *  load()): until then it has nothing on the device and need not be stopped (hold()). */
    bool open_later = false;
};

/** How long a runner took to be ready for its candidate (docs/sandbox.md, Cost). */
struct RunnerStart {
    bool ahead = false;      ///< started before its candidate was known
    double setup_ms = -1;    ///< the runner's own set-up (device, CUPTI, confinement), as it reports it
    double waited_ms = 0;    ///< what the evaluation waited for it: from asking to its library loaded
    /** Steps of its start, ms, as it reports them: `spawn_ms` (from the judge's fork to the
     *  runner's main: bubblewrap and exec), `driver_ms` (cuInit), `unopened_ms` (its wait for
     *  open_device()), `device_ms` (its device: `init_ms`, `context_ms`), `threads_ms` (a first
     *  timed call and CUPTI's start), `confine_ms` (its seccomp filter and limits). */
    std::map<std::string, double> parts;
};

class RunnerProcess {
public:
    /** Starts the runner and, where `opt.library` is set, waits until it has loaded it.
     *  Without a library it is started ahead of need: it sets itself up (its device, its
     *  confinement) on its own while the judge goes on, and load() gives it its candidate.
     *  Throws CandidateFault, or DeviceFault when the process cannot be started. */
    explicit RunnerProcess(const RunnerOptions& opt);
    ~RunnerProcess();
    /** Waits until the runner is set up, then has it load `library` (copied into a folder
     *  only it and the judge see). Once only. Throws CandidateFault or DeviceFault. */
    void load(const std::filesystem::path& library);
    /** A runner started ahead: whether it is still setting itself up (device work, memory
     *  allocations of its own). False once it waits for load(), or has died. */
    bool setting_up();
    /** Lets a runner started with `open_later` make its device context (once; load() and
     *  finish_setup() do it too). */
    void open_device();
    bool opened() const { return opened_; }
    /** Waits until it has started its driver (Started), or is set up; nothing more. Throws as
     *  load() does. */
    void await_started();
    /** Stops a runner that is setting itself up on the device (once opened), every process of
     *  its sandbox, and waits until they stand still, so that its device work and allocations
     *  stay out of a call the judge measures; release() lets it go on. No-op once it is set up,
     *  and before open_device(): it then waits before its device. Returns whether it stopped it
     *  (false where it was set up, not opened, or held already). */
    bool hold();
    void release();
    /** Lets a runner started ahead go on (release()) and waits until it is set up. Throws
     *  CandidateFault or DeviceFault as load() does. */
    void finish_setup();
    RunnerStart start_figures() const { return start_; }
    RunnerProcess(const RunnerProcess&) = delete;
    RunnerProcess& operator=(const RunnerProcess&) = delete;

    /** Maps `arena` in the runner (unless `remap` is false: the arena it maps already) and
     *  describes the tensor sets in it. */
    void bind(const Arena& arena, const std::vector<long long>& sizes, const std::vector<double>& params,
              const std::vector<std::vector<std::size_t>>& set_offsets, bool remap = true);
    /** Calls the entry point on set `index`. wall_ms is the judge's clock around the call;
     *  event_ms what the runner reports (its device events on CUDA; the judge's clock on the
     *  host), never more than wall_ms. Throws CandidateFault. */
    CallTime call(std::size_t index);
    /** Has the runner do an empty device operation (so that its context, not the judge's,
     *  holds the GPU when a timed call starts). Throws CandidateFault. */
    void arm();
    /** The same under the runner's launch accounting (CUDA), counting on for `late_work_ms`
     *  after the call's work (Device::account_launches): its report. Throws CandidateFault. */
    LaunchReport account(std::size_t index, int late_work_ms);
    /** Stops every thread of the runner (SIGSTOP) and waits until they stand still, so that
     *  nothing changes while the judge looks at what it wrote; then counts its threads and
     *  children and reads its CPU clock. thaw() lets it run again (CPU time it used while
     *  stopped is charged as work_between_calls). */
    void freeze();
    void thaw();
    /** Counts its threads and children as it runs (after a call the judge does not look at). */
    void count();

    /** Threads, children and CPU time seen by freeze() since the runner started. */
    RunnerActivity activity() const;
    /** The shared objects mapped in the runner now. */
    MappedFiles mapped() const { return runner_pid_ > 0 ? mapped_files(runner_pid_) : MappedFiles{}; }

    /** How the process is confined, and what could not be applied (for the diagnosis). */
    const std::vector<std::string>& warnings() const { return warnings_; }
    bool sandboxed() const { return sandboxed_; }
    /** The start of what the library printed (capped). */
    std::string output();

private:
    [[noreturn]] void died(const std::string& while_doing);
    /** The runner wrote something that is not the reply expected: it is stopped. */
    [[noreturn]] void forged(const std::string& expected);
    void start(const RunnerOptions& opt);
    /** Reads what bubblewrap reports (its init's PID) and the runner's Started and Confined
     *  messages, opening it in between. */
    void await_setup();
    /** Sends `type` for set `index` (with `value`) and receives the reply, timed by the judge's
     *  clock; a fault reply becomes a CandidateFault. */
    std::optional<ReceivedMessage> exchange(RunnerMsg type, std::size_t index, const std::string& doing, double& wall_ms,
                                            std::uint64_t value = 0);
    void kill_all();
    void shut_down();
    /** Bubblewrap's init names itself; the runner is its child. Stops the runner there,
     *  counts what it has before the library is loaded, and lets it load. */
    void before_loading(const std::filesystem::path& library);
    /** The next message while it sets up or loads; its end or a device error throws. */
    ReceivedMessage next_message(const std::string& doing);
    void stop();
    void resume();
    /** Before the judge lets it run: charges CPU time used since it was seen stopped; returns
     *  its CPU clock now (-1 unknown). */
    long long let_run();
    void record(const ThreadCensus& c);

    std::string backend_ = "host";
    pid_t pid_ = -1;         ///< the process forked (bubblewrap, or the runner itself)
    pid_t runner_pid_ = -1;  ///< the runner (in this PID namespace)
    int sock_ = -1;
    int out_fd_ = -1;
    bool sandboxed_ = false;
    bool frozen_ = false;
    RunnerActivity activity_;
    ProcessCpuClock cpu_;
    long long call_start_ns_ = -1;  ///< CPU clock when the current call was sent
    long long stopped_ns_ = -1;     ///< CPU clock when it last stood still
    double last_cpu_ms_ = -1;       ///< CPU time of the last exchange, from continuing it to stopping it
    int last_threads_ = 0;          ///< threads the last count counted
    bool mapped_once_ = false;      ///< bind() has run
    int info_fd_ = -1;              ///< bubblewrap's report of its init's PID, until read
    int load_timeout_s_ = 60;
    bool started_ = false;          ///< its Started message has been read
    bool opened_ = false;           ///< Open has been sent
    /** A message read while looking for Started that was not it (an error at start): the next
     *  one next_message() returns. */
    std::optional<ReceivedMessage> early_;
    bool set_up_ = false;           ///< its Confined message has been read
    bool loaded_ = false;
    std::vector<pid_t> held_;       ///< processes hold() stopped
    std::filesystem::path stage_;   ///< the folder (visible read-only to it) its library is copied into
    std::chrono::steady_clock::time_point asked_;  ///< when it was asked for (its candidate's wait starts)
    RunnerStart start_;
    std::vector<std::string> warnings_;
    std::atomic<bool> stop_drain_{false};
    std::thread drain_;
    std::mutex out_mutex_;
    std::string output_;
};

}  // namespace kf::worker
