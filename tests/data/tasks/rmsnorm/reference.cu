#include "kf_task.h"

// Naive reference: one thread per row (uncoalesced), two passes over its row.
__global__ void rmsnorm_reference(const float* x, const float* w, float* y, int rows, int cols, float eps) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* xr = x + (long long)r * cols;
    float ss = 0;
    for (int c = 0; c < cols; ++c) ss += xr[c] * xr[c];
    const float inv = rsqrtf(ss / cols + eps);
    for (int c = 0; c < cols; ++c) y[(long long)r * cols + c] = xr[c] * inv * w[c];
}

extern "C" void kf_solve(const float* x, const float* w, float* y, int rows, int cols, float eps, cudaStream_t stream) {
    rmsnorm_reference<<<(rows + 127) / 128, 128, 0, stream>>>(x, w, y, rows, cols, eps);
}
