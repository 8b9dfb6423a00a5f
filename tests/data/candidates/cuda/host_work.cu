// Correct, after 3 ms of work on the host inside the call: time the device never sees, which
// the timer must still charge (the gate holds the stream while the host enqueues the call).
#include "kf_task.h"

#include <chrono>

__global__ void scale_add_late(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ z, int n,
                               float alpha) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) z[i] = alpha * x[i] + y[i];
}

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha, cudaStream_t stream) {
    if (n <= 0) return;
    const auto t0 = std::chrono::steady_clock::now();
    volatile unsigned spin = 0;
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(3)) spin = spin + 1;
    int grid = (n + 255) / 256;
    if (grid > 4096) grid = 4096;
    scale_add_late<<<grid, 256, 0, stream>>>(x, y, z, n, alpha);
}
