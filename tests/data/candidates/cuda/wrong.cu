// Wrong: forgets alpha (z = x + y).
#include "kf_task.h"

__global__ void scale_add_wrong(const float* x, const float* y, float* z, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = x[i] + y[i];
}

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha, cudaStream_t stream) {
    (void)alpha;
    if (n <= 0) return;
    scale_add_wrong<<<(n + 255) / 256, 256, 0, stream>>>(x, y, z, n);
}
