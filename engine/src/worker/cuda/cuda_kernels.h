#pragma once
// Launchers for the worker's own CUDA kernels (fills, comparison, checksum, peaks). Plain C++
// so that host code compiled by the host compiler can call them. Every launcher enqueues on
// `stream` and returns the launch status (cudaGetLastError after the launch); none of them
// synchronises.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kf/dtype.h"

namespace kf::worker::gpu {

/** Threads per block of every worker kernel. */
inline constexpr int kBlock = 256;

/** Accumulators of one comparison, in device memory. Doubles are kept as their bit patterns
 *  (non-negative doubles order like their bits, so atomicMax on the bits is a max). */
struct DeviceCompareResult {
    unsigned long long mismatches;
    unsigned long long nan_count;
    unsigned long long inf_count;
    unsigned long long unwritten;
    unsigned long long max_abs_bits;
    unsigned long long max_rel_bits;
    unsigned long long first_index;  ///< ~0ull when no mismatch
};

/** Grid size for `work_items` items: at most blocks_cap blocks of kBlock threads, at least 1. */
int grid_for(std::int64_t work_items, int blocks_cap);

cudaError_t launch_fill_random(void* dst, DType dtype, std::int64_t count, int kind, double a, double b,
                               std::uint64_t seed, int grid, cudaStream_t stream);

/** out must be initialised (counters 0, first_index ~0ull) before the launch. */
cudaError_t launch_compare(const void* actual, const void* expected, DType dtype, std::int64_t count, double atol,
                           double rtol, std::uint8_t poison, DeviceCompareResult* out, int grid, cudaStream_t stream);

/** Adds the checksum of bytes [0, bytes) of p to *out (which must start at 0). p must be 8-byte aligned. */
cudaError_t launch_checksum(const void* p, std::size_t bytes, unsigned long long* out, int grid, cudaStream_t stream);

/** Adds to *out the number of bytes in [p, p+len) that differ from `byte`. */
cudaError_t launch_count_not_equal(const void* p, std::size_t len, std::uint8_t byte, unsigned long long* out,
                                   int grid, cudaStream_t stream);

/** Copies n16 16-byte elements (float4) from src to dst; both 16-byte aligned. */
cudaError_t launch_copy16(void* dst, const void* src, std::size_t n16, int grid, cudaStream_t stream);

/** Reads n16 16-byte elements of p (16-byte aligned); sink receives a value only by accident of the data. */
cudaError_t launch_read16(const void* p, std::size_t n16, unsigned int* sink, int grid, cudaStream_t stream);

/**
 * A one-thread kernel that holds `stream` until the host writes a non-zero int to `open`
 * (mapped host memory), or until timeout_ns have passed, when it writes 1 to `timed_out`.
 */
cudaError_t launch_gate(const int* open, unsigned long long timeout_ns, int* timed_out, cudaStream_t stream);

/** 8 independent FMA chains of `iters` steps per thread; writes one float per thread to out. */
cudaError_t launch_fma(float* out, long long iters, int grid, int block, cudaStream_t stream);

/** A one-thread kernel named kMarkerKernelName, used to learn the stream id CUPTI reports. */
cudaError_t launch_marker(cudaStream_t stream);
inline constexpr const char* kMarkerKernelName = "kf_worker_stream_marker";

}  // namespace kf::worker::gpu
