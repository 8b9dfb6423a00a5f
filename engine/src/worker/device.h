#pragma once
// The worker's view of where candidates run: memory, fills, comparisons, timing and launch
// accounting. One implementation per backend (host_device.cpp, cuda_device.cu); the
// evaluation logic (evaluation.cpp) is written once against this interface.
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kf/dtype.h"
#include "kf/task.h"

namespace kf::worker {

/** Bytes of canary placed after every buffer; a write into it is an out-of-bounds write. */
inline constexpr std::size_t kCanaryBytes = 4096;
inline constexpr std::uint8_t kCanaryByte = 0x5A;

/** A device allocation of `bytes` usable bytes followed by kCanaryBytes of canary. */
struct Buffer {
    void* ptr = nullptr;
    std::size_t bytes = 0;
    bool external = false;  ///< owned by an Arena (shared_arena.h), not by the device
};

/** Element-wise comparison of a candidate's output against the reference's. */
struct CompareResult {
    std::int64_t mismatches = 0;
    std::int64_t nan_count = 0;   ///< NaN in actual
    std::int64_t inf_count = 0;   ///< Inf in actual where expected differs
    std::int64_t unwritten = 0;   ///< actual still equals the poison pattern, expected does not
    double max_abs = 0;           ///< over finite pairs
    double max_rel = 0;           ///< max |a-e| / (|e| + atol) over finite pairs
    std::int64_t first_index = -1;  ///< lowest mismatching index
    double first_expected = 0, first_actual = 0;
};

struct DeviceInfo {
    std::string backend;  ///< "cuda" or "host"
    std::string name;
    std::string uuid;     ///< stable id for caching peaks
    std::string arch;     ///< "sm_90" on CUDA, "native" on host
    int sm_count = 0;     ///< SMs on CUDA, logical cores on host
    int cc_major = 0, cc_minor = 0;
    std::uint64_t memory_bytes = 0;
    std::uint64_t l2_bytes = 0;  ///< L2 on CUDA, last-level cache on host
    std::string driver;
};

struct Peaks {
    double bandwidth_gbps = 0;  ///< copy bandwidth, bytes read + written
    double fp32_gflops = 0;     ///< FMA rate, 2 flops per FMA
    std::string method;
};

struct CallTime {
    double event_ms = 0;  ///< device events on the candidate's stream (host: same as wall)
    double wall_ms = 0;   ///< host clock from before the call to after a device-wide sync
    double cpu_ms = -1;   ///< CPU time of the runner's process during the call, read by the judge (-1 unknown)
};

struct LaunchReport {
    bool supported = false;
    std::int64_t kernels = 0;                ///< kernels launched during the call
    std::int64_t kernels_other_streams = 0;  ///< of which not on the stream given to the candidate
    std::vector<std::string> kernel_names;   ///< distinct names, demangled where possible
    /** Modules loaded into the process since the candidate's library was loaded (CUDA runner,
     *  after Device::library_loaded()); 0 elsewhere or when they cannot be counted. */
    std::int64_t modules_loaded = 0;
    std::string note;
};

/** A device error. Sticky errors (illegal address...) leave the context unusable. */
class DeviceFault : public std::runtime_error {
public:
    DeviceFault(const std::string& what, bool sticky) : std::runtime_error(what), sticky_(sticky) {}
    bool sticky() const { return sticky_; }

private:
    bool sticky_;
};

class Arena;

class Device {
public:
    virtual ~Device() = default;
    virtual DeviceInfo info() = 0;
    /** Measures copy bandwidth and FMA rate (takes ~1 s); the caller caches the result. */
    virtual Peaks measure_peaks() = 0;

    /** Allocates bytes + kCanaryBytes and fills the canary. Throws DeviceFault when out of memory. */
    virtual Buffer alloc(std::size_t bytes) = 0;
    virtual void release(Buffer& b) = 0;
    /** `capacity` bytes of this device's memory that a runner process can map (shared_arena.h). */
    virtual std::unique_ptr<Arena> new_arena(std::size_t capacity) = 0;
    /** Fills `count` elements of dtype with draws of `init` for `seed` (see rng.h). */
    virtual void fill_random(const Buffer& b, DType dtype, std::int64_t count, const InitSpec& init,
                             std::uint64_t seed) = 0;
    /** Sets bytes [offset, offset+len) to `byte`. */
    virtual void fill_bytes(const Buffer& b, std::size_t offset, std::size_t len, std::uint8_t byte) = 0;
    /** True when bytes [offset, offset+len) all equal `byte`. */
    virtual bool bytes_equal(const Buffer& b, std::size_t offset, std::size_t len, std::uint8_t byte) = 0;
    /** Order-independent 64-bit checksum of the first b.bytes bytes. */
    virtual std::uint64_t checksum(const Buffer& b) = 0;
    virtual CompareResult compare(const Buffer& actual, const Buffer& expected, DType dtype, std::int64_t count,
                                  const Tolerance& tol, std::uint8_t poison_byte) = 0;
    virtual void copy(const Buffer& dst, const Buffer& src, std::size_t bytes) = 0;

    /**
     * Time of the fastest copy of `bytes` bytes (half read, half written): warm or flushed
     * caches, every core or one, best of a few, the least ever measured for that size. The
     * host's time floor for a working set of that size. 0 where the device's measured peaks are the floor instead (CUDA).
     */
    virtual double copy_floor_ms(std::size_t bytes) {
        (void)bytes;
        return 0;
    }

    /** The stream handed to candidates (cudaStream_t on CUDA, nullptr on host). */
    virtual void* stream() = 0;
    /** Device-wide synchronisation; throws DeviceFault for an error raised by earlier work. */
    virtual void synchronize() = 0;
    /** Evicts the caches (L2 on CUDA, last-level cache on host) before a timed repetition. */
    virtual void flush_cache() = 0;
    /** sync; start clock and event; fn(); end event; device sync; stop clock. */
    virtual CallTime timed_call(const std::function<void()>& fn) = 0;
    /** Runs fn once while counting the kernels it launches and the streams they use. With
     *  `late_work_ms` > 0 the count goes on that long after fn's work is done, for work that a
     *  thread or a signal handler of the candidate's launches after the call has returned. */
    virtual LaunchReport account_launches(const std::function<void()>& fn, int late_work_ms) = 0;
    /** Called once the candidate's library is loaded (in its runner): from then on,
     *  account_launches() reports the device modules loaded since (LaunchReport::modules_loaded). */
    virtual void library_loaded() {}
    /** Bytes of device memory free now, on the whole device (every process's use counts), or -1
     *  where it is not known (the host). */
    virtual std::int64_t free_device_memory() { return -1; }
    /** True when this process sleeps while it waits for the device (instead of spinning), so
     *  that its CPU time is the work it does on the host. */
    virtual bool waits_without_spinning() const { return false; }
    /** How long making this device took, ms: the driver's start where not started before, and
     *  cudaInitDevice, which makes the context (`init_ms`); the rest of the context's set-up,
     *  its stream, events and scratch (`context_ms`); -1 where not measured. */
    struct SetupTimes {
        double init_ms = -1, context_ms = -1;
    };
    virtual SetupTimes setup_times() const { return {}; }
    /** Opens and closes a named range a profiler can select kernels by (NVTX push/pop on
     *  CUDA, where `kfoundry profile` uses it; nothing on the host). */
    virtual void range_push(const char* name) { (void)name; }
    virtual void range_pop() {}
};

std::unique_ptr<Device> make_host_device();
#ifdef KF_HAVE_CUDA
/** Throws DeviceFault when there is no usable CUDA device at `ordinal`. `quiet_waits`: the
 *  process sleeps while it waits for the device (blocking sync), as a runner does, so that
 *  its CPU time counts only host work (host_compute). */
std::unique_ptr<Device> make_cuda_device(int ordinal, bool quiet_waits = false);
/** Starts the CUDA driver in this process (cuInit, through the runtime), without a context:
 *  nothing is allocated on a device. `runner`: module loading set as a runner's device needs
 *  it (before the driver starts). Contexts get one hardware queue (CUDA_DEVICE_MAX_CONNECTIONS
 *  1) unless the environment sets it. Returns the number of devices; throws DeviceFault when
 *  no device is usable. */
int start_cuda_driver(bool runner);

/** Device memory that a judge exported (Arena::fd() of a CUDA arena), mapped into this
 *  process's context on device `ordinal`; unmapped when destroyed. */
class MappedArena {
public:
    virtual ~MappedArena() = default;
    virtual char* base() const = 0;
};
/** Maps `bytes` of the arena behind `fd` (which it closes). Throws DeviceFault. */
std::unique_ptr<MappedArena> map_cuda_arena(int fd, std::size_t bytes, int ordinal);
#endif

}  // namespace kf::worker
