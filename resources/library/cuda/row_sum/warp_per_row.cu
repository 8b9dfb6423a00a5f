#include "kf_task.h"

#include <cstdint>

// Row sum, one warp per row: lanes stride over the row (float4 loads when cols % 4 == 0 and
// x is 16-byte aligned), then a 5-step shuffle reduction; no shared memory, no block
// barriers. WARPS_PER_BLOCK rows per block. Wins for many short-to-medium rows (up to a few
// thousand columns); for a handful of very long rows use split-row.

#define WARPS_PER_BLOCK 8  // @kf tunable values(1, 2, 4, 8, 16, 32)

template <bool VEC>
__global__ void __launch_bounds__(WARPS_PER_BLOCK * 32) row_sum_warp_kernel(const float* __restrict__ x,
                                                                             float* __restrict__ y, int rows,
                                                                             int cols) {
    const int lane = threadIdx.x % 32;
    const int r = blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / 32;
    if (r >= rows) return;  // whole warp leaves together
    const float* row = x + static_cast<size_t>(r) * cols;
    const int n4 = VEC ? cols / 4 : 0;
    float s = 0.0f;
    if (VEC) {
        const float4* row4 = reinterpret_cast<const float4*>(row);
        for (int i = lane; i < n4; i += 32) {
            const float4 v = __ldg(row4 + i);
            s += (v.x + v.y) + (v.z + v.w);
        }
    }
    for (int c = n4 * 4 + lane; c < cols; c += 32) s += __ldg(row + c);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    if (lane == 0) y[r] = s;
}

extern "C" void kf_solve(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const bool vec = (cols % 4 == 0) && (reinterpret_cast<uintptr_t>(x) % 16 == 0);
    const int grid = (rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
    if (vec) row_sum_warp_kernel<true><<<grid, WARPS_PER_BLOCK * 32, 0, stream>>>(x, y, rows, cols);
    else row_sum_warp_kernel<false><<<grid, WARPS_PER_BLOCK * 32, 0, stream>>>(x, y, rows, cols);
}
