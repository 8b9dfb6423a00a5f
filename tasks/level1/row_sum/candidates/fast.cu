#include "kf_task.h"

#include <cstdint>

// Faster row sum.
//  * long rows: one block per row, float4 loads (when the row start is 16-byte aligned, i.e.
//    cols % 4 == 0 and x aligned), UNROLL independent loads in flight, warp shuffles + a small
//    shared array for the block reduction;
//  * short rows (cols <= WARP_COLS): one warp per row, several rows per block.

#define BLOCK 256        // @kf tunable values(128, 256, 512, 1024)
#define UNROLL 4         // @kf tunable values(1, 2, 4, 8)
#define WARP_COLS 1024   // @kf tunable values(0, 256, 1024, 4096)
#define WARP_BLOCK 256   // @kf tunable values(128, 256, 512)

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

template <bool VEC>
__global__ void __launch_bounds__(BLOCK) row_sum_block_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                              int cols) {
    const float* row = x + static_cast<size_t>(blockIdx.x) * cols;
    float acc = 0.0f;
    int c0 = 0;
    if (VEC) {
        const float4* row4 = reinterpret_cast<const float4*>(row);
        const int n4 = cols / 4;
        float4 a[UNROLL];
        int i = threadIdx.x;
        for (; i + (UNROLL - 1) * BLOCK < n4; i += UNROLL * BLOCK) {
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) a[u] = __ldg(row4 + i + u * BLOCK);
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) acc += (a[u].x + a[u].y) + (a[u].z + a[u].w);
        }
        for (; i < n4; i += BLOCK) {
            float4 v = __ldg(row4 + i);
            acc += (v.x + v.y) + (v.z + v.w);
        }
        c0 = n4 * 4;
    }
    for (int c = c0 + threadIdx.x; c < cols; c += BLOCK) acc += __ldg(row + c);

    __shared__ float warp_partial[BLOCK / 32];
    acc = warp_sum(acc);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) warp_partial[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        float v = lane < BLOCK / 32 ? warp_partial[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) y[blockIdx.x] = v;
    }
}

__global__ void __launch_bounds__(WARP_BLOCK) row_sum_warp_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                                  int rows, int cols) {
    const int warps_per_block = WARP_BLOCK / 32;
    const int r = blockIdx.x * warps_per_block + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (r >= rows) return;
    const float* row = x + static_cast<size_t>(r) * cols;
    float acc = 0.0f;
    for (int c = lane; c < cols; c += 32) acc += __ldg(row + c);
    acc = warp_sum(acc);
    if (lane == 0) y[r] = acc;
}

extern "C" void kf_solve(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    if (cols <= WARP_COLS) {
        const int warps_per_block = WARP_BLOCK / 32;
        const int blocks = (rows + warps_per_block - 1) / warps_per_block;
        row_sum_warp_kernel<<<blocks, WARP_BLOCK, 0, stream>>>(x, y, rows, cols);
        return;
    }
    const bool vec = (cols % 4 == 0) && (reinterpret_cast<uintptr_t>(x) % 16 == 0);
    if (vec) row_sum_block_kernel<true><<<rows, BLOCK, 0, stream>>>(x, y, cols);
    else row_sum_block_kernel<false><<<rows, BLOCK, 0, stream>>>(x, y, cols);
}
