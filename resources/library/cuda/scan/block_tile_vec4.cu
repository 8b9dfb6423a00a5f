#include "kf_task.h"

#include <cstdint>

// Faster row scan: one block per row; the row is walked in tiles of BLOCK * 4 elements. Each
// thread loads 4 consecutive elements (one float4 when cols % 4 == 0 and the buffers are
// 16-byte aligned), scans them in registers, the per-thread totals are scanned with warp
// shuffles and a shared array of per-warp totals, and a running carry links the tiles.

#define BLOCK 256   // @kf tunable values(128, 256, 512, 1024)

#define NWARPS (BLOCK / 32)

template <bool VEC>
__global__ void __launch_bounds__(BLOCK) scan_rows_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                          int cols) {
    __shared__ float warp_total[NWARPS];
    const size_t base = static_cast<size_t>(blockIdx.x) * cols;
    const float* row = x + base;
    float* out = y + base;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

    float carry = 0.0f;
    for (int t0 = 0; t0 < cols; t0 += BLOCK * 4) {
        const int c = t0 + threadIdx.x * 4;
        float v0, v1, v2, v3;
        if (VEC) {
            float4 v = c < cols ? __ldg(reinterpret_cast<const float4*>(row + c)) : make_float4(0.f, 0.f, 0.f, 0.f);
            v0 = v.x; v1 = v.y; v2 = v.z; v3 = v.w;
        } else {
            v0 = c + 0 < cols ? __ldg(row + c + 0) : 0.f;
            v1 = c + 1 < cols ? __ldg(row + c + 1) : 0.f;
            v2 = c + 2 < cols ? __ldg(row + c + 2) : 0.f;
            v3 = c + 3 < cols ? __ldg(row + c + 3) : 0.f;
        }
        v1 += v0;
        v2 += v1;
        v3 += v2;
        const float total = v3;

        // Inclusive scan of the thread totals within the warp.
        float inc = total;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const float n = __shfl_up_sync(0xffffffffu, inc, off);
            if (lane >= off) inc += n;
        }
        if (lane == 31) warp_total[warp] = inc;
        __syncthreads();
        float before = 0.0f, tile_total = 0.0f;
#pragma unroll
        for (int w = 0; w < NWARPS; ++w) {
            const float t = warp_total[w];
            if (w < warp) before += t;
            tile_total += t;
        }
        const float offset = carry + before + (inc - total);
        v0 += offset;
        v1 += offset;
        v2 += offset;
        v3 += offset;
        if (VEC) {
            if (c < cols) *reinterpret_cast<float4*>(out + c) = make_float4(v0, v1, v2, v3);
        } else {
            if (c + 0 < cols) out[c + 0] = v0;
            if (c + 1 < cols) out[c + 1] = v1;
            if (c + 2 < cols) out[c + 2] = v2;
            if (c + 3 < cols) out[c + 3] = v3;
        }
        carry += tile_total;
        __syncthreads();  // warp_total is rewritten by the next tile
    }
}

extern "C" void kf_solve(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const bool vec = (cols % 4 == 0) && (reinterpret_cast<uintptr_t>(x) % 16 == 0) &&
                     (reinterpret_cast<uintptr_t>(y) % 16 == 0);
    if (vec) scan_rows_kernel<true><<<rows, BLOCK, 0, stream>>>(x, y, cols);
    else scan_rows_kernel<false><<<rows, BLOCK, 0, stream>>>(x, y, cols);
}
