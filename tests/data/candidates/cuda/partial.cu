// Writes only the first half of the output.
#include "kf_task.h"

__global__ void scale_add_partial(const float* x, const float* y, float* z, int n, float alpha) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 2) z[i] = alpha * x[i] + y[i];
}

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha, cudaStream_t stream) {
    if (n <= 1) return;
    scale_add_partial<<<(n / 2 + 255) / 256, 256, 0, stream>>>(x, y, z, n, alpha);
}
