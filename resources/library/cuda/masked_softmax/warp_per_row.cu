#include "kf_task.h"

#include <cstdint>

// Scaled, masked row softmax, one warp per row: each lane keeps an online (max, sum) over the
// kept columns of its strided slice (masked columns are skipped), the pairs are merged with
// shuffles, and a second pass writes exp(s - max) / sum where kept, 0 elsewhere. A fully
// masked row (max == -inf) is written as zeros. No shared memory or block barriers; scalar
// loads, any cols. WARPS_PER_BLOCK rows per block. Wins for many short/medium rows.

#define WARPS_PER_BLOCK 4  // @kf tunable values(1, 2, 4, 8, 16)

__device__ __forceinline__ void online_add(float& m, float& s, float v) {
    if (v > m) {
        s = s * __expf(m - v) + 1.0f;  // m == -inf gives s * 0 + 1
        m = v;
    } else {
        s += __expf(v - m);
    }
}

__device__ __forceinline__ void online_merge(float& m, float& s, float m2, float s2) {
    const float mm = fmaxf(m, m2);
    if (mm == -INFINITY) return;  // both empty
    s = s * __expf(m - mm) + s2 * __expf(m2 - mm);
    m = mm;
}

__global__ void __launch_bounds__(WARPS_PER_BLOCK * 32) masked_softmax_warp_kernel(const float* __restrict__ x,
                                                                                    const uint8_t* __restrict__ mask,
                                                                                    float* __restrict__ y, int rows,
                                                                                    int cols, float scale) {
    const int lane = threadIdx.x % 32;
    const int r = blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / 32;
    if (r >= rows) return;  // whole warp leaves together
    const size_t base = static_cast<size_t>(r) * cols;
    const float* row = x + base;
    const uint8_t* mrow = mask + base;
    float* out = y + base;

    float m = -INFINITY, s = 0.0f;
    for (int c = lane; c < cols; c += 32)
        if (__ldg(mrow + c)) online_add(m, s, scale * __ldg(row + c));
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
        const float s2 = __shfl_xor_sync(0xffffffffu, s, off);
        online_merge(m, s, m2, s2);
    }
    if (m == -INFINITY) {  // no kept column (same value in every lane)
        for (int c = lane; c < cols; c += 32) out[c] = 0.0f;
        return;
    }
    const float inv = 1.0f / s;
    for (int c = lane; c < cols; c += 32)
        out[c] = __ldg(mrow + c) ? __expf(scale * __ldg(row + c) - m) * inv : 0.0f;
}

extern "C" void kf_solve(const float* x, const bool* mask, float* y, int rows, int cols, float scale,
                         cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const int grid = (rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
    masked_softmax_warp_kernel<<<grid, WARPS_PER_BLOCK * 32, 0, stream>>>(
        x, reinterpret_cast<const uint8_t*>(mask), y, rows, cols, scale);
}
