#include "kf_task.h"

// Row softmax, one thread block per row, classic three-pass form: (1) block max, (2) block sum
// of exp(x - max), (3) write exp(x - max) / sum. Each reduction is a shared-memory tree over
// BLOCK partials. Scalar, coalesced loads with a strided loop, so any cols works. Simple and
// robust; wins for medium/wide rows where one block per row has enough parallelism; loses to
// warp-per-row on very short rows and to single-read register variants on bandwidth.

#define BLOCK 256  // @kf tunable values(64, 128, 256, 512, 1024)

// Tree reduction over BLOCK values in shared memory; result returned to every thread.
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

__global__ void __launch_bounds__(BLOCK, 1) softmax_block_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                              int cols) {
    __shared__ float sh[BLOCK];
    const size_t base = static_cast<size_t>(blockIdx.x) * cols;
    const float* row = x + base;
    float* out = y + base;

    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += BLOCK) m = fmaxf(m, __ldg(row + c));
    m = block_reduce<true>(m, sh);

    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK) s += __expf(__ldg(row + c) - m);
    s = block_reduce<false>(s, sh);
    const float inv = 1.0f / s;

    for (int c = threadIdx.x; c < cols; c += BLOCK) out[c] = __expf(__ldg(row + c) - m) * inv;
}

extern "C" void kf_solve(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    softmax_block_kernel<<<rows, BLOCK, 0, stream>>>(x, y, cols);
}
