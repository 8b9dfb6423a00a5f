#include "kf_task.h"

#include <cstdint>

// Scaled, masked row softmax, one thread block per row, three passes with shared-memory tree
// reductions: (1) block max of scale * x over the kept columns (masked ones count as -inf),
// (2) block sum of exp(s - max) over the kept columns, (3) write exp(s - max) / sum where
// kept and 0 elsewhere. A fully masked row has max == -inf and is written as zeros (never
// NaN). Scalar loads (the mask is read as bytes), so any cols and alignment work.

#define BLOCK 256  // @kf tunable values(64, 128, 256, 512, 1024)

template <bool IS_MAX>
__device__ __forceinline__ float block_reduce(float v, float* sh) {
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            const float o = sh[threadIdx.x + s];
            sh[threadIdx.x] = IS_MAX ? fmaxf(sh[threadIdx.x], o) : sh[threadIdx.x] + o;
        }
        __syncthreads();
    }
    const float r = sh[0];
    __syncthreads();  // sh is reused by the next reduction
    return r;
}

__global__ void __launch_bounds__(BLOCK, 1) masked_softmax_block_kernel(const float* __restrict__ x,
                                                                        const uint8_t* __restrict__ mask,
                                                                        float* __restrict__ y, int cols,
                                                                        float scale) {
    __shared__ float sh[BLOCK];
    const size_t base = static_cast<size_t>(blockIdx.x) * cols;
    const float* row = x + base;
    const uint8_t* mrow = mask + base;
    float* out = y + base;

    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        if (__ldg(mrow + c)) m = fmaxf(m, scale * __ldg(row + c));
    m = block_reduce<true>(m, sh);

    if (m == -INFINITY) {  // no kept column in this row (uniform across the block)
        for (int c = threadIdx.x; c < cols; c += BLOCK) out[c] = 0.0f;
        return;
    }

    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        if (__ldg(mrow + c)) s += __expf(scale * __ldg(row + c) - m);
    s = block_reduce<false>(s, sh);
    const float inv = 1.0f / s;

    for (int c = threadIdx.x; c < cols; c += BLOCK)
        out[c] = __ldg(mrow + c) ? __expf(scale * __ldg(row + c) - m) * inv : 0.0f;
}

extern "C" void kf_solve(const float* x, const bool* mask, float* y, int rows, int cols, float scale,
                         cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    masked_softmax_block_kernel<<<rows, BLOCK, 0, stream>>>(x, reinterpret_cast<const uint8_t*>(mask), y, cols,
                                                            scale);
}
