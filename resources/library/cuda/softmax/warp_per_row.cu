#include "kf_task.h"

#include <cstdint>

// Row softmax, one warp per row, no shared memory and no __syncthreads: each lane keeps an
// online (max, sum-of-exp) pair over its strided columns, the 32 pairs are merged with
// shuffles, then a second pass re-reads the row and writes the result. float4 loads when
// cols % 4 == 0 and both buffers are 16-byte aligned, scalar otherwise. Wins on many short
// or medium rows (cols up to a few thousand), where a block per row would idle most threads.

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

template <bool VEC>
__global__ void __launch_bounds__(WARPS_PER_BLOCK * 32) softmax_warp_kernel(const float* __restrict__ x,
                                                                             float* __restrict__ y, int rows,
                                                                             int cols) {
    const int lane = threadIdx.x % 32;
    const int r = blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / 32;
    if (r >= rows) return;  // whole warp leaves together
    const size_t base = static_cast<size_t>(r) * cols;
    const float* row = x + base;
    float* out = y + base;
    const int n4 = VEC ? cols / 4 : 0;

    float m = -INFINITY, s = 0.0f;
    if (VEC) {
        const float4* row4 = reinterpret_cast<const float4*>(row);
        for (int i = lane; i < n4; i += 32) {
            const float4 v = __ldg(row4 + i);
            online_add(m, s, v.x);
            online_add(m, s, v.y);
            online_add(m, s, v.z);
            online_add(m, s, v.w);
        }
    }
    for (int c = n4 * 4 + lane; c < cols; c += 32) online_add(m, s, __ldg(row + c));

#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
        const float s2 = __shfl_xor_sync(0xffffffffu, s, off);
        online_merge(m, s, m2, s2);
    }
    const float inv = 1.0f / s;

    if (VEC) {
        const float4* row4 = reinterpret_cast<const float4*>(row);
        float4* out4 = reinterpret_cast<float4*>(out);
        for (int i = lane; i < n4; i += 32) {
            const float4 v = __ldg(row4 + i);
            out4[i] = make_float4(__expf(v.x - m) * inv, __expf(v.y - m) * inv, __expf(v.z - m) * inv,
                                  __expf(v.w - m) * inv);
        }
    }
    for (int c = n4 * 4 + lane; c < cols; c += 32) out[c] = __expf(__ldg(row + c) - m) * inv;
}

extern "C" void kf_solve(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const bool vec = (cols % 4 == 0) && (reinterpret_cast<uintptr_t>(x) % 16 == 0) &&
                     (reinterpret_cast<uintptr_t>(y) % 16 == 0);
    const int grid = (rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
    if (vec)
        softmax_warp_kernel<true><<<grid, WARPS_PER_BLOCK * 32, 0, stream>>>(x, y, rows, cols);
    else
        softmax_warp_kernel<false><<<grid, WARPS_PER_BLOCK * 32, 0, stream>>>(x, y, rows, cols);
}
