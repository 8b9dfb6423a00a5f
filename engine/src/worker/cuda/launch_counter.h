#pragma once
// Kernel tracing through the CUPTI Activity API (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, which
// does not serialise kernels). Tracing is enabled only between start() and stop(), so the
// worker's own fills and comparisons outside that window are never recorded.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

namespace kf::worker::gpu {

struct TracedKernel {
    std::string name;  ///< as CUPTI reports it (mangled for C++ kernels)
    std::uint32_t stream_id = 0;
    std::uint32_t context_id = 0;
    std::uint32_t correlation_id = 0;
    bool name_from_launch = false;  ///< name read from the launched function (not CUPTI's record)
};

class KernelTrace {
public:
    /** Registers the buffer callbacks (once), drops stale records and enables kernel tracing.
     *  Returns "" on success, else a note naming the CUPTI call and error. */
    std::string start();
    /** Disables kernel tracing; with flush, waits for all records (call after a device sync).
     *  Returns "" on success, else a note. Safe to call when start() failed. */
    std::string stop(bool flush);
    /** The kernels recorded since start() (valid after stop(true)). Names are read from the
     *  launched functions themselves (cudaFuncGetName / cuFuncGetName, captured through launch
     *  callbacks) where possible: CUPTI's record names can be stale after a module is unloaded
     *  and another loaded at the same address while tracing was off. Call while the traced
     *  code's libraries are still loaded. */
    std::vector<TracedKernel> take();
    /** Records CUPTI dropped since the last call (0 when unknown). */
    std::size_t dropped();
    /** CUPTI's id of a stream (cuptiGetStreamIdEx); false when CUPTI cannot tell. */
    bool stream_id(cudaStream_t stream, std::uint32_t& id, std::string& note);

private:
    bool enabled_ = false;
    bool callbacks_on_ = false;
};

/** Counts, from now on and for the life of the process, the modules loaded into any context
 *  (CUPTI's resource callback CUPTI_CBID_RESOURCE_MODULE_LOADED, on the process's one CUPTI
 *  subscriber, shared with KernelTrace's launch callbacks). Idempotent. Returns "" on success,
 *  else a note. */
std::string watch_module_loads();
/** Modules loaded since watch_module_loads() first succeeded. */
std::uint64_t modules_loaded();

/** Demangles a C++ symbol; returns the input when it is not a mangled name. */
std::string demangle(const std::string& name);

}  // namespace kf::worker::gpu
