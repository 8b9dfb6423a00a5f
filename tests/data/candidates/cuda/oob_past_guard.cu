// Correct, but also writes z[n + 1040]: 4160 bytes past the end of the output, beyond the
// 4 KiB canary after it, where the memory the runner maps has room to spare.
#include "kf_task.h"

__global__ void scale_add_far(const float* x, const float* y, float* z, int n, float alpha) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = alpha * x[i] + y[i];
    if (i == 0) z[n + 1040] = 1.0f;
}

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha, cudaStream_t stream) {
    if (n <= 0) return;
    scale_add_far<<<(n + 255) / 256, 256, 0, stream>>>(x, y, z, n, alpha);
}
