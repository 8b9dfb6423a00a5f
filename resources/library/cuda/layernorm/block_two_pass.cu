#include "kf_task.h"

// Layer norm, one thread block per row, scalar and simple: pass 1 block-sums x for the mean,
// pass 2 block-sums (x - mean)^2 for the biased variance (two-pass: no cancellation), pass 3
// writes (x - mean) * rstd * gamma + beta. Reductions are shared-memory trees over BLOCK
// partials. Strided, coalesced scalar accesses, so any cols and alignment work; passes 2 and
// 3 mostly hit L1/L2. Wins for wide rows; a warp per row is better for short rows.

#define BLOCK 256  // @kf tunable values(64, 128, 256, 512, 1024)

__device__ __forceinline__ float block_sum(float v, float* sh) {
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    const float r = sh[0];
    __syncthreads();  // sh is reused by the next reduction
    return r;
}

__global__ void __launch_bounds__(BLOCK, 1) layernorm_block_kernel(const float* __restrict__ x,
                                                                   const float* __restrict__ gamma,
                                                                   const float* __restrict__ beta,
                                                                   float* __restrict__ y, int cols, float eps) {
    __shared__ float sh[BLOCK];
    const size_t base = static_cast<size_t>(blockIdx.x) * cols;
    const float* row = x + base;
    float* out = y + base;

    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK) s += __ldg(row + c);
    const float mean = block_sum(s, sh) / cols;

    float q = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK) {
        const float d = __ldg(row + c) - mean;
        q = fmaf(d, d, q);
    }
    const float rstd = rsqrtf(block_sum(q, sh) / cols + eps);

    for (int c = threadIdx.x; c < cols; c += BLOCK)
        out[c] = fmaf((__ldg(row + c) - mean) * rstd, __ldg(gamma + c), __ldg(beta + c));
}

extern "C" void kf_solve(const float* x, const float* gamma, const float* beta, float* y, int rows, int cols,
                         float eps, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    layernorm_block_kernel<<<rows, BLOCK, 0, stream>>>(x, gamma, beta, y, cols, eps);
}
