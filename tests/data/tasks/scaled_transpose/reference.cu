#include "kf_task.h"

// Naive reference: one thread per output element; the writes are coalesced, the reads stride
// down the input's columns.
__global__ void scaled_transpose_reference(const float* x, float* y, int rows, int cols, float alpha) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)rows * cols) return;
    const long long c = i / rows, r = i % rows;
    y[i] = alpha * x[r * cols + c];
}

extern "C" void kf_solve(const float* x, float* y, int rows, int cols, float alpha, cudaStream_t stream) {
    const long long n = (long long)rows * cols;
    scaled_transpose_reference<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(x, y, rows, cols, alpha);
}
