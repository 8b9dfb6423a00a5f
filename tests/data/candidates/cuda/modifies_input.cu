// Correct output, but it also overwrites the input x (through const_cast).
#include "kf_task.h"

__global__ void scale_add_modifies(const float* x, const float* y, float* z, int n, float alpha) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = alpha * x[i] + y[i];
        z[i] = v;
        const_cast<float*>(x)[i] = 0.0f;
    }
}

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha, cudaStream_t stream) {
    if (n <= 0) return;
    scale_add_modifies<<<(n + 255) / 256, 256, 0, stream>>>(x, y, z, n, alpha);
}
