#include "kf_task.h"

// Reference masked softmax: one block per row, three plain passes (max over kept columns,
// sum of exponentials in double, write), shared-memory tree reductions. A row with no kept
// column is written as zeros.

#define REF_BLOCK 256

__global__ void masked_softmax_reference_kernel(const float* __restrict__ x, const bool* __restrict__ mask,
                                                float* __restrict__ y, int cols, float scale) {
    __shared__ float smax[REF_BLOCK];
    __shared__ double ssum[REF_BLOCK];
    const size_t base = static_cast<size_t>(blockIdx.x) * cols;
    const float* row = x + base;
    const bool* keep = mask + base;
    float* out = y + base;

    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += REF_BLOCK)
        if (keep[c]) m = fmaxf(m, scale * row[c]);
    smax[threadIdx.x] = m;
    __syncthreads();
    for (int s = REF_BLOCK / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) smax[threadIdx.x] = fmaxf(smax[threadIdx.x], smax[threadIdx.x + s]);
        __syncthreads();
    }
    const float row_max = smax[0];
    if (row_max == -INFINITY) {  // no kept column
        for (int c = threadIdx.x; c < cols; c += REF_BLOCK) out[c] = 0.0f;
        return;
    }

    double acc = 0.0;
    for (int c = threadIdx.x; c < cols; c += REF_BLOCK)
        if (keep[c]) acc += static_cast<double>(expf(scale * row[c] - row_max));
    ssum[threadIdx.x] = acc;
    __syncthreads();
    for (int s = REF_BLOCK / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) ssum[threadIdx.x] += ssum[threadIdx.x + s];
        __syncthreads();
    }
    const double total = ssum[0];

    for (int c = threadIdx.x; c < cols; c += REF_BLOCK)
        out[c] = keep[c] ? static_cast<float>(static_cast<double>(expf(scale * row[c] - row_max)) / total) : 0.0f;
}

extern "C" void kf_solve(const float* x, const bool* mask, float* y, int rows, int cols, float scale,
                         cudaStream_t stream) {
    masked_softmax_reference_kernel<<<rows, REF_BLOCK, 0, stream>>>(x, mask, y, cols, scale);
}
