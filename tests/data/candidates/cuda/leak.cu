// Correct, and allocates 8 MiB of device memory in every call without ever freeing it.
#include "kf_task.h"

__global__ void scale_add_leaky(const float* x, const float* y, float* z, int n, float alpha) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) z[i] = alpha * x[i] + y[i];
}

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha, cudaStream_t stream) {
    void* lost = nullptr;
    cudaMalloc(&lost, 8u << 20);
    if (n <= 0) return;
    int grid = (n + 255) / 256;
    if (grid > 4096) grid = 4096;
    scale_add_leaky<<<grid, 256, 0, stream>>>(x, y, z, n, alpha);
}
