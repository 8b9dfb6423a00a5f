#include "kf_task.h"

// Row-wise inclusive scan, one warp per row: the row is walked in chunks of 32 * ITEMS
// elements; a lane loads ITEMS elements of the chunk (element k * 32 + lane, so every load is
// coalesced), each 32-element slice is scanned with a 5-step __shfl_up_sync Kogge-Stone scan,
// and a running carry (broadcast from lane 31) links the slices. No shared memory or block
// barriers; WARPS_PER_BLOCK rows per block. Wins for many short/medium rows; for a few
// very long rows only a handful of warps are busy.

#define WARPS_PER_BLOCK 4  // @kf tunable values(1, 2, 4, 8, 16)
#define ITEMS 4            // @kf tunable values(1, 2, 4, 8)

__global__ void __launch_bounds__(WARPS_PER_BLOCK * 32) scan_warp_kernel(const float* __restrict__ x,
                                                                          float* __restrict__ y, int rows, int cols) {
    const int lane = threadIdx.x % 32;
    const int r = blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / 32;
    if (r >= rows) return;  // whole warp leaves together
    const size_t base = static_cast<size_t>(r) * cols;
    const float* row = x + base;
    float* out = y + base;

    float carry = 0.0f;
    for (int c0 = 0; c0 < cols; c0 += 32 * ITEMS) {
        float v[ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int c = c0 + k * 32 + lane;
            v[k] = c < cols ? __ldg(row + c) : 0.0f;
        }
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            float s = v[k];
#pragma unroll
            for (int off = 1; off < 32; off <<= 1) {
                const float t = __shfl_up_sync(0xffffffffu, s, off);
                if (lane >= off) s += t;
            }
            const int c = c0 + k * 32 + lane;
            if (c < cols) out[c] = carry + s;
            carry += __shfl_sync(0xffffffffu, s, 31);
        }
    }
}

extern "C" void kf_solve(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const int grid = (rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
    scan_warp_kernel<<<grid, WARPS_PER_BLOCK * 32, 0, stream>>>(x, y, rows, cols);
}
