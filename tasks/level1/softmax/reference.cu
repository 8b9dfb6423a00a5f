#include "kf_task.h"

// Reference softmax: one block per row, three plain passes over the row (max, sum of
// exponentials accumulated in double, normalised write), shared-memory tree reductions.

#define REF_BLOCK 256

__global__ void softmax_reference_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float smax[REF_BLOCK];
    __shared__ double ssum[REF_BLOCK];
    const size_t base = static_cast<size_t>(blockIdx.x) * cols;
    const float* row = x + base;
    float* out = y + base;

    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += REF_BLOCK) m = fmaxf(m, row[c]);
    smax[threadIdx.x] = m;
    __syncthreads();
    for (int s = REF_BLOCK / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) smax[threadIdx.x] = fmaxf(smax[threadIdx.x], smax[threadIdx.x + s]);
        __syncthreads();
    }
    const float row_max = smax[0];

    double acc = 0.0;
    for (int c = threadIdx.x; c < cols; c += REF_BLOCK) acc += static_cast<double>(expf(row[c] - row_max));
    ssum[threadIdx.x] = acc;
    __syncthreads();
    for (int s = REF_BLOCK / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) ssum[threadIdx.x] += ssum[threadIdx.x + s];
        __syncthreads();
    }
    const double total = ssum[0];

    for (int c = threadIdx.x; c < cols; c += REF_BLOCK)
        out[c] = static_cast<float>(static_cast<double>(expf(row[c] - row_max)) / total);
}

extern "C" void kf_solve(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    softmax_reference_kernel<<<rows, REF_BLOCK, 0, stream>>>(x, y, cols);
}
