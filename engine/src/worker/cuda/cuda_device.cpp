// The CUDA implementation of the worker's Device (device.h). Host code only: the kernels are
// in cuda_kernels.cu, CUPTI tracing in launch_counter.cpp. Every CUDA call is checked; errors
// become DeviceFault, sticky when the context no longer works (see CudaDevice::raise).
#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>  // before rng.h, which uses sqrt/log/cos
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <unistd.h>
#include <nvtx3/nvToolsExt.h>  // header-only NVTX: ranges for `kfoundry profile`

#include "cuda/cuda_kernels.h"
#include "cuda/launch_counter.h"
#include "device.h"
#include "rng.h"
#include "kf/stats.h"
#include "shared_arena.h"

namespace kf::worker {

namespace {

using gpu::DeviceCompareResult;

constexpr unsigned long long kNoIndex = ~0ull;

std::string err_text(cudaError_t e) {
    const char* name = cudaGetErrorName(e);
    const char* text = cudaGetErrorString(e);
    return std::string(name ? name : "cudaError?") + " (" + (text ? text : "?") + ")";
}

/** Errors after which the CUDA context cannot be used again (documented as such). */
bool known_sticky(cudaError_t e) {
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
        return true;
    default:
        return false;
    }
}

/** After an error: true when the context no longer works (a sync or a small allocation fails). */
bool context_broken() {
    (void)cudaGetLastError();  // clears a non-sticky error; a sticky one stays
    if (cudaDeviceSynchronize() != cudaSuccess) return true;
    void* p = nullptr;
    if (cudaMalloc(&p, 256) != cudaSuccess) {
        (void)cudaGetLastError();
        return true;
    }
    if (cudaFree(p) != cudaSuccess) return true;
    return cudaGetLastError() != cudaSuccess;
}

[[noreturn]] void throw_fault(cudaError_t e, const std::string& what) {
    const bool sticky = known_sticky(e) || context_broken();
    throw DeviceFault(what + ": " + err_text(e) + (sticky ? " [sticky: the CUDA context is unusable]" : ""), sticky);
}

void check(cudaError_t e, const std::string& what) {
    if (e != cudaSuccess) throw_fault(e, what);
}

double host_value(DType t, const unsigned char* p) {
    switch (t) {
    case DType::F32: { float v; std::memcpy(&v, p, 4); return v; }
    case DType::F64: { double v; std::memcpy(&v, p, 8); return v; }
    case DType::F16: { std::uint16_t v; std::memcpy(&v, p, 2); return half_bits_to_float(v); }
    case DType::BF16: { std::uint16_t v; std::memcpy(&v, p, 2); return bf16_bits_to_float(v); }
    case DType::I32: { std::int32_t v; std::memcpy(&v, p, 4); return static_cast<double>(v); }
    case DType::I64: { std::int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case DType::U8: return static_cast<double>(p[0]);
    case DType::Bool: return p[0] != 0 ? 1.0 : 0.0;
    }
    return 0.0;
}

double bits_to_double(unsigned long long bits) {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
}

int draw_kind(const std::string& dist) {
    if (dist == "uniform") return kUniform;
    if (dist == "normal") return kNormal;
    if (dist == "randint") return kRandInt;
    if (dist == "bernoulli") return kBernoulli;
    if (dist == "constant") return kConstant;
    throw std::invalid_argument("unknown init distribution '" + dist + "'");
}

std::string driver_string() {
    std::string s;
    std::ifstream f("/proc/driver/nvidia/version");
    std::string line;
    if (f && std::getline(f, line)) {
        // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ..." or
        // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ...":
        // the first word after "Kernel Module" made of digits and dots.
        auto pos = line.find("Kernel Module");
        if (pos != std::string::npos) {
            std::istringstream is(line.substr(pos + 13));
            for (std::string w; is >> w;)
                if (std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos &&
                    w.find_first_not_of("0123456789.") == std::string::npos) {
                    s = w;
                    break;
                }
        }
    }
    int v = 0;
    std::string cuda;
    if (cudaDriverGetVersion(&v) == cudaSuccess && v > 0)
        cuda = "CUDA " + std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
    else
        (void)cudaGetLastError();
    if (s.empty()) return cuda;
    return cuda.empty() ? s : s + " (" + cuda + ")";
}

/** A plain device allocation freed on scope exit (for the peak measurements). */
struct DeviceMemory {
    void* ptr = nullptr;
    explicit DeviceMemory(std::size_t bytes) {
        cudaError_t e = cudaMalloc(&ptr, bytes);
        if (e == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            throw DeviceFault("out of device memory allocating " + std::to_string(bytes) + " bytes", false);
        }
        check(e, "cudaMalloc(" + std::to_string(bytes) + ")");
    }
    ~DeviceMemory() {
        if (ptr) (void)cudaFree(ptr);
    }
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;
};


/**
 * The driver API functions for shared device memory, looked up through the runtime
 * (cudaGetDriverEntryPointByVersion): the worker does not link libcuda, so that it starts
 * where no driver is installed (the host backend).
 */
struct DriverApi {
#define KF_DRIVER_FN(name) decltype(&::name) name = nullptr;
    KF_DRIVER_FN(cuGetErrorName)
    KF_DRIVER_FN(cuGetErrorString)
    KF_DRIVER_FN(cuMemGetAllocationGranularity)
    KF_DRIVER_FN(cuMemCreate)
    KF_DRIVER_FN(cuMemRelease)
    KF_DRIVER_FN(cuMemAddressReserve)
    KF_DRIVER_FN(cuMemAddressFree)
    KF_DRIVER_FN(cuMemMap)
    KF_DRIVER_FN(cuMemUnmap)
    KF_DRIVER_FN(cuMemSetAccess)
    KF_DRIVER_FN(cuMemExportToShareableHandle)
    KF_DRIVER_FN(cuMemImportFromShareableHandle)
#undef KF_DRIVER_FN

    static const DriverApi& get() {
        static const DriverApi api = [] {
            DriverApi a;
            std::string missing;
            auto load = [&missing](const char* name, auto& fn) {
                void* p = nullptr;
                cudaDriverEntryPointQueryResult q{};
                if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
                    q != cudaDriverEntryPointSuccess || !p) {
                    (void)cudaGetLastError();
                    missing += std::string(missing.empty() ? "" : ", ") + name;
                    return;
                }
                fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
            };
#define KF_LOAD(name) load(#name, a.name);
            KF_LOAD(cuGetErrorName)
            KF_LOAD(cuGetErrorString)
            KF_LOAD(cuMemGetAllocationGranularity)
            KF_LOAD(cuMemCreate)
            KF_LOAD(cuMemRelease)
            KF_LOAD(cuMemAddressReserve)
            KF_LOAD(cuMemAddressFree)
            KF_LOAD(cuMemMap)
            KF_LOAD(cuMemUnmap)
            KF_LOAD(cuMemSetAccess)
            KF_LOAD(cuMemExportToShareableHandle)
            KF_LOAD(cuMemImportFromShareableHandle)
#undef KF_LOAD
            if (!missing.empty()) throw DeviceFault("the CUDA driver lacks " + missing, false);
            return a;
        }();
        return api;
    }
};

void check_cu(CUresult r, const std::string& what) {
    if (r == CUDA_SUCCESS) return;
    const DriverApi& d = DriverApi::get();
    const char* name = nullptr;
    const char* text = nullptr;
    d.cuGetErrorName(r, &name);
    d.cuGetErrorString(r, &text);
    throw DeviceFault(what + ": " + (name ? name : "CUresult?") + " (" + (text ? text : "?") + ")",
                      r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED);
}

CUmemAllocationProp shareable_prop(int ordinal) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = ordinal;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return prop;
}

/** Reserves an address range for `bytes` and `guard` more on either side, maps `handle` in
 *  the middle and makes it readable and writable; the guards stay unmapped, so that an access
 *  just past either end faults. Returns the mapped start. */
CUdeviceptr map_handle(CUmemGenericAllocationHandle handle, std::size_t bytes, int ordinal, std::size_t guard = 0) {
    CUdeviceptr range = 0;
    check_cu(DriverApi::get().cuMemAddressReserve(&range, bytes + 2 * guard, 0, 0, 0), "cuMemAddressReserve");
    const CUdeviceptr ptr = range + guard;
    CUresult r = DriverApi::get().cuMemMap(ptr, bytes, 0, handle, 0);
    if (r != CUDA_SUCCESS) {
        DriverApi::get().cuMemAddressFree(range, bytes + 2 * guard);
        check_cu(r, "cuMemMap");
    }
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = ordinal;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    r = DriverApi::get().cuMemSetAccess(ptr, bytes, &access, 1);
    if (r != CUDA_SUCCESS) {
        DriverApi::get().cuMemUnmap(ptr, bytes);
        DriverApi::get().cuMemAddressFree(range, bytes + 2 * guard);
        check_cu(r, "cuMemSetAccess");
    }
    return ptr;
}

/** The granularity of shareable allocations on `ordinal` (the unit of guards and capacities). */
std::size_t shareable_granularity(int ordinal) {
    CUmemAllocationProp prop = shareable_prop(ordinal);
    std::size_t gran = 0;
    check_cu(DriverApi::get().cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
             "cuMemGetAllocationGranularity");
    return std::max<std::size_t>(gran, 64);
}

/** Device memory exported as a POSIX file descriptor, which a runner maps into its own
 *  context (map_cuda_arena): no address of the judge's other memory is reachable from it. */
class CudaArena final : public Arena {
public:
    CudaArena(std::size_t capacity, int ordinal, cudaStream_t stream) : stream_(stream) {
        CUmemAllocationProp prop = shareable_prop(ordinal);
        std::size_t gran = 0;
        check_cu(DriverApi::get().cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                 "cuMemGetAllocationGranularity");
        gran = std::max<std::size_t>(gran, 64);
        capacity_ = std::max<std::size_t>((capacity + gran - 1) / gran * gran, gran);
        CUresult r = DriverApi::get().cuMemCreate(&handle_, capacity_, &prop, 0);
        if (r == CUDA_ERROR_OUT_OF_MEMORY)
            throw DeviceFault("out of device memory allocating " + std::to_string(capacity_) + " shared bytes", false);
        check_cu(r, "cuMemCreate(" + std::to_string(capacity_) + ", POSIX file descriptor)");
        try {
            ptr_ = map_handle(handle_, capacity_, ordinal);
            int fd = -1;
            check_cu(DriverApi::get().cuMemExportToShareableHandle(&fd, handle_, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                     "cuMemExportToShareableHandle");
            fd_ = fd;
        } catch (...) {
            release();
            throw;
        }
        base_ = reinterpret_cast<char*>(ptr_);
    }
    ~CudaArena() override { release(); }

private:
    void fill_canary(char* p, std::size_t n) override {
        check(cudaMemsetAsync(p, kCanaryByte, n, stream_), "cudaMemsetAsync(canary)");
        check(cudaStreamSynchronize(stream_), "filling the canary");
    }

    void release() {
        if (ptr_) {
            (void)cudaDeviceSynchronize();
            DriverApi::get().cuMemUnmap(ptr_, capacity_);
            DriverApi::get().cuMemAddressFree(ptr_, capacity_);
        }
        if (handle_) DriverApi::get().cuMemRelease(handle_);
        if (fd_ >= 0) close(fd_);
        (void)cudaGetLastError();
        ptr_ = 0;
        handle_ = 0;
        fd_ = -1;
    }

    cudaStream_t stream_;
    CUmemGenericAllocationHandle handle_ = 0;
    CUdeviceptr ptr_ = 0;
};

class CudaMappedArena final : public MappedArena {
public:
    CudaMappedArena(int fd, std::size_t bytes, int ordinal) : bytes_(bytes) {
        CUmemGenericAllocationHandle handle = 0;
        CUresult r = DriverApi::get().cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
                                                    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        close(fd);
        check_cu(r, "cuMemImportFromShareableHandle");
        try {
            guard_ = shareable_granularity(ordinal);
            ptr_ = map_handle(handle, bytes, ordinal, guard_);
        } catch (...) {
            DriverApi::get().cuMemRelease(handle);
            throw;
        }
        DriverApi::get().cuMemRelease(handle);  // the mapping keeps the memory
    }
    ~CudaMappedArena() override {
        (void)cudaDeviceSynchronize();
        DriverApi::get().cuMemUnmap(ptr_, bytes_);
        DriverApi::get().cuMemAddressFree(ptr_ - guard_, bytes_ + 2 * guard_);
        (void)cudaGetLastError();
    }
    char* base() const override { return reinterpret_cast<char*>(ptr_); }

private:
    std::size_t bytes_;
    std::size_t guard_ = 0;  ///< unmapped bytes reserved on either side
    CUdeviceptr ptr_ = 0;
};

class CudaDevice final : public Device {
public:
    explicit CudaDevice(int ordinal, bool quiet_waits) : ordinal_(ordinal) {
        // A runner (quiet_waits) loads every module of a library when the library registers
        // it, before any context is made here: the candidate's own modules are then loaded by
        // its dlopen, and a module loaded during a call is one it loaded itself (library_loaded);
        // start_cuda_driver() sets that up before the driver starts, where it is not started yet.
        const auto t0 = std::chrono::steady_clock::now();
        const auto ms_since = [](std::chrono::steady_clock::time_point t) {
            return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
        };
        const int count = start_cuda_driver(quiet_waits);
        if (ordinal < 0 || ordinal >= count)
            throw DeviceFault("no CUDA device " + std::to_string(ordinal) + " (" + std::to_string(count) +
                                  " present)", false);
        try {
            if (quiet_waits) {
                // Before the primary context exists: synchronisations then block instead of
                // spinning (the events still time the device's work).
                quiet_waits_ = cudaInitDevice(ordinal, cudaDeviceScheduleBlockingSync, cudaInitDeviceFlagsAreValid) ==
                               cudaSuccess;
                if (!quiet_waits_) (void)cudaGetLastError();
            }
            setup_.init_ms = ms_since(t0);
            const auto t1 = std::chrono::steady_clock::now();
            check(cudaSetDevice(ordinal), "cudaSetDevice");
            check(cudaFree(nullptr), "creating the CUDA context");
            check(cudaGetDeviceProperties(&props_, ordinal), "cudaGetDeviceProperties");
            check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
            check(cudaEventCreate(&start_), "cudaEventCreate");
            check(cudaEventCreate(&stop_), "cudaEventCreate");
            check(cudaMalloc(&scratch_, 256), "cudaMalloc(scratch)");
            // The cache-flush buffer is made on the first flush: only the judge flushes, and a
            // candidate's runner (a device of its own, started for every evaluation) never does.
            sync("device setup");
            setup_.context_ms = ms_since(t1);
        } catch (...) {
            free_all();
            throw;
        }
        blocks_cap_ = std::max(1, props_.multiProcessorCount) * 8;
    }

    ~CudaDevice() override { free_all(); }

    DeviceInfo info() override {
        DeviceInfo d;
        d.backend = "cuda";
        d.name = props_.name;
        static const char* hex = "0123456789abcdef";
        for (int i = 0; i < 16; ++i) {
            const auto byte = static_cast<unsigned char>(props_.uuid.bytes[i]);
            d.uuid += hex[byte >> 4];
            d.uuid += hex[byte & 15];
        }
        d.arch = "sm_" + std::to_string(props_.major) + std::to_string(props_.minor);
        d.sm_count = props_.multiProcessorCount;
        d.cc_major = props_.major;
        d.cc_minor = props_.minor;
        d.memory_bytes = props_.totalGlobalMem;
        d.l2_bytes = props_.l2CacheSize > 0 ? static_cast<std::uint64_t>(props_.l2CacheSize) : 0;
        d.driver = driver_string();
        return d;
    }

    Peaks measure_peaks() override {
        bind();
        sync("before measuring peaks");
        Peaks p;

        // Copy bandwidth: two buffers of up to 1 GiB (at most 1/8 of free memory each).
        std::size_t free_b = 0, total_b = 0;
        check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
        std::size_t bytes = std::min<std::size_t>(std::size_t{1} << 30, free_b / 8);
        bytes &= ~((std::size_t{1} << 20) - 1);  // whole MiB, so a multiple of 16
        if (bytes < (std::size_t{16} << 20))
            throw DeviceFault("too little free device memory to measure peaks (" + std::to_string(free_b) + " bytes)",
                              false);
        double copy_ms = 0;
        {
            DeviceMemory src(bytes), dst(bytes);
            check(cudaMemsetAsync(src.ptr, 0x3C, bytes, stream_), "cudaMemsetAsync(peak source)");
            const std::size_t n16 = bytes / 16;
            auto launch = [&] { return gpu::launch_copy16(dst.ptr, src.ptr, n16, blocks_cap_, stream_); };
            for (int i = 0; i < 3; ++i) check(launch(), "copy kernel launch");
            sync("copy warm-up");
            std::vector<double> ms;
            for (int i = 0; i < 10; ++i) ms.push_back(time_on_stream(launch, "copy kernel"));
            copy_ms = util::median(ms);
        }
        p.bandwidth_gbps = copy_ms > 0 ? 2.0 * static_cast<double>(bytes) / (copy_ms * 1e-3) / 1e9 : 0.0;

        // FMA rate: 8 independent chains per thread, SMs x 8 blocks of 256 threads, ~50 ms a run.
        const int grid = blocks_cap_;
        const int block = gpu::kBlock;
        const double threads = static_cast<double>(grid) * block;
        DeviceMemory out(static_cast<std::size_t>(grid) * block * sizeof(float));
        auto* outp = static_cast<float*>(out.ptr);
        check(gpu::launch_fma(outp, 16, grid, block, stream_), "FMA kernel launch");  // loads the module
        sync("FMA warm-up");
        long long iters = 1 << 14;
        const double calib_ms = time_on_stream([&] { return gpu::launch_fma(outp, iters, grid, block, stream_); },
                                               "FMA kernel");
        if (calib_ms > 0) {
            const double scaled = static_cast<double>(iters) * 50.0 / calib_ms;
            iters = static_cast<long long>(std::clamp(scaled, static_cast<double>(iters), static_cast<double>(1 << 28)));
        }
        std::vector<double> ms;
        for (int i = 0; i < 5; ++i)
            ms.push_back(time_on_stream([&] { return gpu::launch_fma(outp, iters, grid, block, stream_); },
                                        "FMA kernel"));
        const double fma_ms = util::median(ms);
        p.fp32_gflops = fma_ms > 0 ? 2.0 * 8.0 * threads * static_cast<double>(iters) / (fma_ms * 1e-3) / 1e9 : 0.0;

        std::ostringstream m;
        m << "copy: float4 grid-stride kernel (" << blocks_cap_ << " blocks x " << gpu::kBlock
          << " threads, 4 loads in flight per thread) between two " << (bytes >> 20)
          << " MiB buffers, median of 10 runs after 3 warm-ups, CUDA events, bytes read + written; "
          << "fp32: " << grid << " blocks x " << block << " threads, 8 independent fmaf chains of " << iters
          << " steps per thread (~50 ms), median of 5 runs, 2 flops per FMA";
        p.method = m.str();
        return p;
    }

    Buffer alloc(std::size_t bytes) override {
        bind();
        void* p = nullptr;
        cudaError_t e = cudaMalloc(&p, bytes + kCanaryBytes);
        if (e == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            throw DeviceFault("out of device memory allocating " + std::to_string(bytes) + " bytes", false);
        }
        check(e, "cudaMalloc(" + std::to_string(bytes) + ")");
        try {
            check(cudaMemsetAsync(static_cast<unsigned char*>(p) + bytes, kCanaryByte, kCanaryBytes, stream_),
                  "cudaMemsetAsync(canary)");
            sync("filling the canary");
        } catch (...) {
            (void)cudaFree(p);
            throw;
        }
        Buffer b;
        b.ptr = p;
        b.bytes = bytes;
        return b;
    }

    std::unique_ptr<Arena> new_arena(std::size_t capacity) override {
        bind();
        return std::make_unique<CudaArena>(capacity, ordinal_, stream_);
    }

    void release(Buffer& b) override {
        // Errors here only come from a context that is already broken, which the next checked
        // call reports; release must not throw from cleanup paths.
        if (b.ptr) {
            (void)cudaFree(b.ptr);
            (void)cudaGetLastError();
        }
        b.ptr = nullptr;
        b.bytes = 0;
    }

    void fill_random(const Buffer& b, DType dtype, std::int64_t count, const InitSpec& init,
                     std::uint64_t seed) override {
        bind();
        if (count < 0 || static_cast<std::uint64_t>(count) * size_of(dtype) > b.bytes)
            throw std::invalid_argument("fill_random: " + std::to_string(count) + " elements do not fit the buffer");
        const int kind = draw_kind(init.dist);
        if (count == 0) return;
        check(gpu::launch_fill_random(b.ptr, dtype, count, kind, init.a, init.b, seed,
                                      gpu::grid_for(count, blocks_cap_), stream_),
              "fill kernel launch");
        sync("fill_random");
    }

    void fill_bytes(const Buffer& b, std::size_t offset, std::size_t len, std::uint8_t byte) override {
        bind();
        check_range(b, offset, len, "fill_bytes");
        if (len == 0) return;
        check(cudaMemsetAsync(static_cast<unsigned char*>(b.ptr) + offset, byte, len, stream_), "cudaMemsetAsync");
        sync("fill_bytes");
    }

    bool bytes_equal(const Buffer& b, std::size_t offset, std::size_t len, std::uint8_t byte) override {
        bind();
        check_range(b, offset, len, "bytes_equal");
        if (len == 0) return true;
        sync("before bytes_equal");
        const unsigned char* p = static_cast<const unsigned char*>(b.ptr) + offset;
        if (len <= (std::size_t{1} << 20)) {
            std::vector<unsigned char> host(len);
            check(cudaMemcpyAsync(host.data(), p, len, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync(D2H)");
            sync("bytes_equal copy");
            return std::all_of(host.begin(), host.end(), [byte](unsigned char c) { return c == byte; });
        }
        auto* counter = reinterpret_cast<unsigned long long*>(scratch_);
        check(cudaMemsetAsync(counter, 0, sizeof(unsigned long long), stream_), "cudaMemsetAsync(counter)");
        check(gpu::launch_count_not_equal(p, len, byte, counter,
                                          gpu::grid_for(static_cast<std::int64_t>(len), blocks_cap_), stream_),
              "byte-check kernel launch");
        unsigned long long n = 0;
        check(cudaMemcpyAsync(&n, counter, sizeof n, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync(D2H)");
        sync("bytes_equal");
        return n == 0;
    }

    std::uint64_t checksum(const Buffer& b) override {
        bind();
        sync("before checksum");
        if (b.bytes == 0) return 0;
        auto* sum = reinterpret_cast<unsigned long long*>(scratch_);
        check(cudaMemsetAsync(sum, 0, sizeof(unsigned long long), stream_), "cudaMemsetAsync(checksum)");
        const auto words = static_cast<std::int64_t>(b.bytes / 8 + 1);
        check(gpu::launch_checksum(b.ptr, b.bytes, sum, gpu::grid_for(words, blocks_cap_), stream_),
              "checksum kernel launch");
        unsigned long long v = 0;
        check(cudaMemcpyAsync(&v, sum, sizeof v, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync(D2H)");
        sync("checksum");
        return v;
    }

    CompareResult compare(const Buffer& actual, const Buffer& expected, DType dtype, std::int64_t count,
                          const Tolerance& tol, std::uint8_t poison_byte) override {
        bind();
        CompareResult r;
        const std::size_t esize = size_of(dtype);
        if (count < 0 || static_cast<std::uint64_t>(count) * esize > actual.bytes ||
            static_cast<std::uint64_t>(count) * esize > expected.bytes)
            throw std::invalid_argument("compare: " + std::to_string(count) + " elements do not fit the buffers");
        sync("before compare");
        if (count == 0) return r;

        DeviceCompareResult init{};
        init.first_index = kNoIndex;
        auto* dres = reinterpret_cast<DeviceCompareResult*>(scratch_);
        check(cudaMemcpyAsync(dres, &init, sizeof init, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync(H2D)");
        check(gpu::launch_compare(actual.ptr, expected.ptr, dtype, count, tol.atol, tol.rtol, poison_byte, dres,
                                  gpu::grid_for(count, blocks_cap_), stream_),
              "compare kernel launch");
        DeviceCompareResult h{};
        check(cudaMemcpyAsync(&h, dres, sizeof h, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync(D2H)");
        sync("compare");

        r.mismatches = static_cast<std::int64_t>(h.mismatches);
        r.nan_count = static_cast<std::int64_t>(h.nan_count);
        r.inf_count = static_cast<std::int64_t>(h.inf_count);
        r.unwritten = static_cast<std::int64_t>(h.unwritten);
        r.max_abs = bits_to_double(h.max_abs_bits);
        r.max_rel = bits_to_double(h.max_rel_bits);
        if (h.first_index != kNoIndex && h.first_index < static_cast<unsigned long long>(count)) {
            r.first_index = static_cast<std::int64_t>(h.first_index);
            unsigned char ea[8] = {}, aa[8] = {};
            const std::size_t off = static_cast<std::size_t>(h.first_index) * esize;
            check(cudaMemcpyAsync(ea, static_cast<const unsigned char*>(expected.ptr) + off, esize,
                                  cudaMemcpyDeviceToHost, stream_),
                  "cudaMemcpyAsync(D2H)");
            check(cudaMemcpyAsync(aa, static_cast<const unsigned char*>(actual.ptr) + off, esize,
                                  cudaMemcpyDeviceToHost, stream_),
                  "cudaMemcpyAsync(D2H)");
            sync("compare (first mismatch)");
            r.first_expected = host_value(dtype, ea);
            r.first_actual = host_value(dtype, aa);
        }
        return r;
    }

    void copy(const Buffer& dst, const Buffer& src, std::size_t bytes) override {
        bind();
        if (bytes > dst.bytes || bytes > src.bytes)
            throw std::invalid_argument("copy: " + std::to_string(bytes) + " bytes do not fit the buffers");
        sync("before copy");
        if (bytes == 0) return;
        check(cudaMemcpyAsync(dst.ptr, src.ptr, bytes, cudaMemcpyDeviceToDevice, stream_), "cudaMemcpyAsync(D2D)");
        sync("copy");
    }

    void* stream() override { return static_cast<void*>(stream_); }

    std::int64_t free_device_memory() override {
        bind();
        std::size_t free_bytes = 0, total = 0;
        if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
            (void)cudaGetLastError();
            return -1;
        }
        return static_cast<std::int64_t>(free_bytes);
    }

    bool waits_without_spinning() const override { return quiet_waits_; }
    SetupTimes setup_times() const override { return setup_; }

    void range_push(const char* name) override { nvtxRangePushA(name); }
    void range_pop() override { nvtxRangePop(); }

    void synchronize() override {
        bind();
        sync("device synchronisation");
    }

    void flush_cache() override {
        bind();
        if (!flush_) {
            flush_bytes_ = props_.l2CacheSize > 0 ? 2 * static_cast<std::size_t>(props_.l2CacheSize) : (64u << 20);
            const cudaError_t e = cudaMalloc(&flush_, flush_bytes_);
            if (e == cudaErrorMemoryAllocation) {
                (void)cudaGetLastError();
                flush_ = nullptr;
                throw DeviceFault("out of device memory allocating the cache-flush buffer", false);
            }
            check(e, "cudaMalloc(flush buffer)");
        }
        const int value = static_cast<int>(flush_count_++ & 0xFFu);
        check(cudaMemsetAsync(flush_, value, flush_bytes_, stream_), "cudaMemsetAsync(cache flush)");
        // The memset leaves up to an L2 of dirty lines, whose write-back would be charged to the
        // next timed call: reading the buffer again leaves the cache holding clean lines.
        if (clean_flush_)
            check(gpu::launch_read16(flush_, flush_bytes_ / 16, mapped() ? reinterpret_cast<unsigned int*>(mapped_dev_ + 2) : nullptr, blocks_cap_, stream_),
                  "cache flush read");
    }

    CallTime timed_call(const std::function<void()>& fn) override {
        bind();
        sync("before the timed call");
        // The gate holds the stream while the host enqueues the call, so the events time the
        // device's work and not the host's launch latency. Host work inside the call is still
        // on the judge's wall clock (see RunnerSite::call). A call that waits on its own stream
        // would wait for the gate: the gate times out once, and that process times ungated.
        const bool gated = gate_enabled_ && mapped();
        if (gated) {
            mapped_[0] = 0;
            mapped_[1] = 0;
            std::atomic_thread_fence(std::memory_order_seq_cst);
            check(gpu::launch_gate(mapped_dev_, kGateTimeoutNs, mapped_dev_ + 1, stream_), "gate kernel launch");
        }
        // Opens the gate once: after the stop event is enqueued, or on any way out before it.
        struct GateOpener {
            volatile int* flag;  // null when not gated
            void open() {
                if (!flag) return;
                std::atomic_thread_fence(std::memory_order_seq_cst);
                flag[0] = 1;
                flag = nullptr;
            }
            ~GateOpener() { open(); }
        } gate{gated ? mapped_ : nullptr};
        const auto t0 = std::chrono::steady_clock::now();
        check(cudaEventRecord(start_, stream_), "cudaEventRecord(start)");
        fn();
        const cudaError_t launch = cudaGetLastError();
        if (launch != cudaSuccess) throw_fault(launch, "kernel launch in the candidate");
        const cudaError_t stop = cudaEventRecord(stop_, stream_);
        gate.open();
        check(stop, "cudaEventRecord(stop)");
        sync("the candidate's work");
        const auto t1 = std::chrono::steady_clock::now();
        if (gated && mapped_[1] != 0) gate_enabled_ = false;
        float ms = 0;
        check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
        CallTime t;
        t.event_ms = ms;
        t.wall_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
        return t;
    }

    LaunchReport account_launches(const std::function<void()>& fn, int late_work_ms) override {
        const std::string watch = gpu::watch_module_loads();
        LaunchReport rep = trace_launches(fn, late_work_ms);
        if (!library_loaded_) return rep;
        if (!watch.empty()) {
            rep.note += (rep.note.empty() ? "" : "; ") + ("module loads not counted: " + watch);
            return rep;
        }
        rep.modules_loaded = static_cast<std::int64_t>(gpu::modules_loaded() - modules_at_load_);
        return rep;
    }

    void library_loaded() override {
        (void)gpu::watch_module_loads();
        // A runtime call and a sync: the runtime loads the modules the library registered
        // (CUDA_MODULE_LOADING=EAGER) now at the latest, not in the first call.
        (void)cudaFree(nullptr);
        (void)cudaDeviceSynchronize();
        (void)cudaGetLastError();
        modules_at_load_ = gpu::modules_loaded();
        library_loaded_ = true;
    }

private:
    /** Runs fn with CUPTI kernel tracing on and reports the kernels it launched (and those
     *  launched within `late_work_ms` after its work is done). */
    LaunchReport trace_launches(const std::function<void()>& fn, int late_work_ms) {
        bind();
        sync("before launch accounting");
        LaunchReport rep;
        std::string note = trace_.start();
        if (!note.empty()) {
            (void)trace_.stop(false);
            rep.supported = false;
            rep.note = "CUPTI kernel tracing unavailable: " + note;
            run_and_sync(fn);
            return rep;
        }
        // The marker runs on stream() inside the window: its record tells which stream id
        // CUPTI gives stream(); it is left out of the counts.
        const cudaError_t me = gpu::launch_marker(stream_);
        if (me != cudaSuccess) {
            (void)trace_.stop(false);
            throw_fault(me, "marker kernel launch");
        }
        std::uint32_t api_id = 0;
        std::string id_note;
        const bool have_api_id = trace_.stream_id(stream_, api_id, id_note);
        try {
            fn();
        } catch (...) {
            (void)trace_.stop(false);
            throw;
        }
        const cudaError_t launch = cudaGetLastError();
        cudaError_t work = cudaDeviceSynchronize();
        if (launch == cudaSuccess && work == cudaSuccess && late_work_ms > 0) {
            // Catch work that the candidate left to a thread of its own.
            std::this_thread::sleep_for(std::chrono::milliseconds(late_work_ms));
            work = cudaDeviceSynchronize();
            if (work == cudaSuccess) work = cudaGetLastError();
        }
        if (launch != cudaSuccess || work != cudaSuccess) {
            (void)trace_.stop(false);  // no flush on a possibly broken context; start() drops leftovers
            if (launch != cudaSuccess) throw_fault(launch, "kernel launch in the candidate");
            throw_fault(work, "the candidate's work");
        }
        note = trace_.stop(true);
        const std::vector<gpu::TracedKernel> records = trace_.take();
        const std::size_t dropped = trace_.dropped();

        const gpu::TracedKernel* marker = nullptr;
        for (const auto& k : records)
            if (k.name == gpu::kMarkerKernelName) {
                marker = &k;
                break;
            }
        auto add_note = [&rep](const std::string& s) {
            if (s.empty()) return;
            rep.note += rep.note.empty() ? s : "; " + s;
        };
        if (!marker || dropped > 0) {
            rep.supported = false;
            add_note(dropped > 0 ? "CUPTI dropped " + std::to_string(dropped) + " activity records"
                                 : "CUPTI delivered no record of the worker's marker kernel");
            add_note(note);
            return rep;
        }
        const std::uint32_t sid = marker->stream_id;
        const std::uint32_t ctx = marker->context_id;
        if (have_api_id && api_id != sid)
            add_note("cuptiGetStreamIdEx gave stream id " + std::to_string(api_id) + ", the marker kernel ran on " +
                     std::to_string(sid) + "; using the marker's");
        if (!have_api_id) add_note(id_note);
        add_note(note);

        std::set<std::string> names;
        bool marker_skipped = false;
        for (const auto& k : records) {
            if (!marker_skipped && &k == marker) {
                marker_skipped = true;
                continue;
            }
            ++rep.kernels;
            if (k.stream_id != sid || k.context_id != ctx) ++rep.kernels_other_streams;
            names.insert(gpu::demangle(k.name));
        }
        rep.kernel_names.assign(names.begin(), names.end());
        rep.supported = true;
        return rep;
    }

    void bind() { check(cudaSetDevice(ordinal_), "cudaSetDevice"); }

    /** Device-wide sync, then the last error (launch errors are only reported there). */
    void sync(const std::string& what) {
        cudaError_t e = cudaDeviceSynchronize();
        if (e == cudaSuccess) e = cudaGetLastError();
        if (e != cudaSuccess) throw_fault(e, what);
    }

    void run_and_sync(const std::function<void()>& fn) {
        fn();
        const cudaError_t launch = cudaGetLastError();
        if (launch != cudaSuccess) throw_fault(launch, "kernel launch in the candidate");
        sync("the candidate's work");
    }

    /** The peaks are timed as candidates are (timed_call: the gate, then events). */
    template <typename Launch>
    double time_on_stream(Launch launch, const std::string& what) {
        cudaError_t launched = cudaSuccess;
        const CallTime t = timed_call([&] { launched = launch(); });
        check(launched, what + " launch");
        return t.event_ms;
    }

    static void check_range(const Buffer& b, std::size_t offset, std::size_t len, const char* what) {
        if (!b.ptr || offset > b.bytes + kCanaryBytes || len > b.bytes + kCanaryBytes - offset)
            throw std::invalid_argument(std::string(what) + ": range outside the buffer and its canary");
    }

    /** Three ints of host memory the device reads and writes: the gate, its time-out flag, the flush's sink. */
    bool mapped() {
        if (mapped_) return true;
        if (mapped_failed_) return false;
        void* host = nullptr;
        if (cudaHostAlloc(&host, 64, cudaHostAllocMapped) != cudaSuccess) {
            (void)cudaGetLastError();
            mapped_failed_ = true;
            return false;
        }
        void* dev = nullptr;
        if (cudaHostGetDevicePointer(&dev, host, 0) != cudaSuccess) {
            (void)cudaGetLastError();
            (void)cudaFreeHost(host);
            mapped_failed_ = true;
            return false;
        }
        std::memset(host, 0, 64);
        mapped_ = static_cast<volatile int*>(host);
        mapped_dev_ = static_cast<int*>(dev);
        return true;
    }

    static bool env_off(const char* name) {
        const char* v = std::getenv(name);
        return v && std::string(v) == "0";
    }

    void free_all() {
        if (mapped_) (void)cudaFreeHost(const_cast<int*>(mapped_));
        mapped_ = nullptr;
        mapped_dev_ = nullptr;
        if (flush_) (void)cudaFree(flush_);
        if (scratch_) (void)cudaFree(scratch_);
        if (start_) (void)cudaEventDestroy(start_);
        if (stop_) (void)cudaEventDestroy(stop_);
        if (stream_) (void)cudaStreamDestroy(stream_);
        flush_ = nullptr;
        scratch_ = nullptr;
        start_ = stop_ = nullptr;
        stream_ = nullptr;
        (void)cudaGetLastError();
    }

    int ordinal_ = 0;
    bool quiet_waits_ = false;  ///< synchronisations block instead of spinning (a runner's device)
    cudaDeviceProp props_{};
    cudaStream_t stream_ = nullptr;
    cudaEvent_t start_ = nullptr, stop_ = nullptr;
    void* scratch_ = nullptr;  // 256 bytes: compare result, checksum and byte counters
    void* flush_ = nullptr;
    std::size_t flush_bytes_ = 0;
    unsigned flush_count_ = 1;
    static constexpr unsigned long long kGateTimeoutNs = 50'000'000ull;  // 50 ms
    bool gate_enabled_ = !env_off("KF_TIMING_GATE");
    bool clean_flush_ = !env_off("KF_CLEAN_FLUSH");
    volatile int* mapped_ = nullptr;
    int* mapped_dev_ = nullptr;
    bool mapped_failed_ = false;
    int blocks_cap_ = 8;
    gpu::KernelTrace trace_;
    SetupTimes setup_;
    bool library_loaded_ = false;        ///< library_loaded() was called: module loads are counted
    std::uint64_t modules_at_load_ = 0;  ///< gpu::modules_loaded() when the library's load finished
};

static_assert(sizeof(DeviceCompareResult) <= 256, "scratch holds the compare result");

}  // namespace

int start_cuda_driver(bool runner) {
    if (runner) ::setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    // One hardware work queue per context (unless the environment names a number): every
    // call runs on the one stream it is given, and a context with one queue is made in about
    // half the time of the driver's default eight (docs/sandbox.md, Cost), which every
    // runner pays. Kernels on other streams still run, in order on that queue.
    ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", "1", 0);
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        throw DeviceFault("no usable CUDA device: cudaGetDeviceCount: " + err_text(e), false);
    }
    return count;
}

std::unique_ptr<Device> make_cuda_device(int ordinal, bool quiet_waits) {
    return std::make_unique<CudaDevice>(ordinal, quiet_waits);
}

std::unique_ptr<MappedArena> map_cuda_arena(int fd, std::size_t bytes, int ordinal) {
    check(cudaSetDevice(ordinal), "cudaSetDevice");
    return std::make_unique<CudaMappedArena>(fd, bytes, ordinal);
}

}  // namespace kf::worker
