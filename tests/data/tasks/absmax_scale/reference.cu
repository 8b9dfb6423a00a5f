#include "kf_task.h"

// Naive reference: one thread per row, two passes over it.
__global__ void absmax_reference(const float* x, float* y, int rows, int cols) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* xr = x + (long long)r * cols;
    float m = 0.0f;
    for (int c = 0; c < cols; ++c) m = fmaxf(m, fabsf(xr[c]));
    const float inv = m > 0.0f ? 1.0f / m : 0.0f;
    for (int c = 0; c < cols; ++c) y[(long long)r * cols + c] = xr[c] * inv;
}

extern "C" void kf_solve(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    absmax_reference<<<(rows + 127) / 128, 128, 0, stream>>>(x, y, rows, cols);
}
