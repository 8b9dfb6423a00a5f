// Correct, and waits for its own stream inside the call: the timer's gate must not hold every call.
#include "kf_task.h"

__global__ void scale_add_syncs(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ z, int n,
                                float alpha) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) z[i] = alpha * x[i] + y[i];
}

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha, cudaStream_t stream) {
    if (n <= 0) return;
    int grid = (n + 255) / 256;
    if (grid > 4096) grid = 4096;
    scale_add_syncs<<<grid, 256, 0, stream>>>(x, y, z, n, alpha);
    (void)cudaStreamSynchronize(stream);
}
