// Correct except for one element, which it sets to NaN.
#include "kf_task.h"

__global__ void scale_add_nan(const float* x, const float* y, float* z, int n, float alpha) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = (i == n / 3) ? __int_as_float(0x7fc00000) : alpha * x[i] + y[i];
}

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha, cudaStream_t stream) {
    if (n <= 0) return;
    scale_add_nan<<<(n + 255) / 256, 256, 0, stream>>>(x, y, z, n, alpha);
}
