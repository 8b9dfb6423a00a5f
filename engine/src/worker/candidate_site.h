#pragma once
// Where a library (a candidate, or the reference when it is timed) runs: in a sandboxed
// runner process whose tensors live in memory shared with the judge (host memory, or device
// memory on CUDA), or in the worker's own process (`kfoundry profile`'s single-candidate
// process, and KF_CUDA_IN_PROCESS=1 for comparisons). The evaluation is written once against
// this interface.
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "case_buffers.h"
#include "runner_pool.h"
#include "runner_process.h"

namespace kf::worker {

/** Device memory a library's process took during its calls, measured by the judge as the
 *  device's free memory before and after each call (CUDA). */
struct DeviceMemoryUse {
    bool measured = false;
    double peak_mib = 0;    ///< the most it held after a call (what its calls took, less what they gave back)
    double growth_mib = 0;  ///< held after its last call less held after its first
    double cap_mib = 0;
    int calls = 0;
};

class CandidateSite {
public:
    virtual ~CandidateSite() = default;
    /** `count` new tensor sets of `cc` that the library can reach; replaces the previous ones. */
    virtual std::vector<TensorSet*> new_sets(CaseContext& cc, std::size_t count) = 0;
    /** The most memory one new_sets() of the coming cases needs (Arena bytes): memory shared
     *  with a runner is made that large once and used again by each case that fits. */
    virtual void reserve(std::size_t arena_bytes) { (void)arena_bytes; }
    /** Calls the library on set `i` of the last new_sets() and waits for it. Throws CandidateFault. */
    virtual CallTime call(std::size_t i) = 0;
    /** The same under launch accounting, counting on for `late_work_ms` after the call's work
     *  (Device::account_launches). */
    virtual LaunchReport account(std::size_t i, int late_work_ms) = 0;
    /** Before the calls whose times count: nothing else of the worker's runs on the device
     *  from here on (runners of earlier candidates being ended are gone). Calls before it need
     *  not wait for them. */
    virtual void settle() {}
    /** Stops whatever the library left running (so nothing changes while the judge looks at
     *  the outputs), until thaw(). */
    virtual void freeze() {}
    virtual void thaw() {}
    /** Counts the threads of the library's process after a call the judge does not look at. */
    virtual void count() {}
    /** The library's threads, processes and CPU time outside its calls, as the judge saw
     *  them (measured = false where it runs in the worker's process). */
    virtual RunnerActivity activity() const {
        RunnerActivity a;
        a.note = "the library runs in the worker's process";
        return a;
    }
    /** Device memory its calls took; a call after which it holds more than `bytes` throws a
     *  CandidateFault (`device_memory`). */
    virtual void cap_device_memory(std::uint64_t bytes) { (void)bytes; }
    virtual DeviceMemoryUse device_memory() const { return {}; }
    /** The shared objects mapped where the library runs (`readable` false in the worker's own
     *  process, whose libraries are the worker's). */
    virtual MappedFiles mapped() const { return {}; }
    /** Guard regions of the memory the library can reach that belong to no tensor (the
     *  arena's start and its unused end): every byte must still be kCanaryByte. */
    virtual std::vector<Buffer> guards() const { return {}; }
    /** Confinement notes for the diagnosis. */
    virtual std::vector<std::string> notes() const { return {}; }
    /** Times each later call here at no less than the judge's wall time minus `ms`: a
     *  runner's own report of its time may undercut the judge's clock by no more than the
     *  overhead measured around the reference's calls. 0 leaves reports as they are. */
    virtual void bound_by_overhead(double ms) { (void)ms; }
    /** Where the site's own work went (ms, summed over its life): making and binding tensor
     *  sets, keeping the runner started ahead out of calls, reading the device's free memory,
     *  arming, the runner's calls as the judge's clock saw them, thread counts; empty where the
     *  library runs in the worker's process. */
    virtual nlohmann::json phase_times() const { return nlohmann::json::object(); }
};

/** Calls `fn` in this process. With `blame_library`, device faults become CandidateFaults. */
std::unique_ptr<CandidateSite> in_process_site(Device& dev, EntryFn fn, bool blame_library);
/** Calls the library loaded by `runner`, on tensors in memory of `dev` shared with it. With
 *  `pool`, the runner it started ahead stays out of every call (hush), and `runner` is handed
 *  back to it to be ended in the background; calls before settle() do not wait for the
 *  runners it is still ending. */
std::unique_ptr<CandidateSite> runner_site(Device& dev, std::unique_ptr<RunnerProcess> runner, bool gpu,
                                           RunnerPool* pool = nullptr);

}  // namespace kf::worker
