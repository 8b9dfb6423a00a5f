// Writes through an invalid device address: an illegal-address error, which leaves the CUDA
// context unusable (a sticky fault).
#include "kf_task.h"

#include <cstdint>

__global__ void scale_add_bad(const float* x, const float* y, float* bad, int n, float alpha) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) bad[i] = alpha * x[i] + y[i];
}

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha, cudaStream_t stream) {
    (void)z;
    if (n <= 0) return;
    float* bad = reinterpret_cast<float*>(static_cast<std::uintptr_t>(0x1000));  // never mapped
    scale_add_bad<<<(n + 255) / 256, 256, 0, stream>>>(x, y, bad, n, alpha);
}
