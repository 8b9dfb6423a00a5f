// Correct, but also writes z[n + 7], past the end of the output (inside the 4 KB canary).
#include "kf_task.h"

__global__ void scale_add_oob(const float* x, const float* y, float* z, int n, float alpha) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = alpha * x[i] + y[i];
    if (i == 0) z[n + 7] = 1.0f;
}

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha, cudaStream_t stream) {
    if (n <= 0) return;
    scale_add_oob<<<(n + 255) / 256, 256, 0, stream>>>(x, y, z, n, alpha);
}
