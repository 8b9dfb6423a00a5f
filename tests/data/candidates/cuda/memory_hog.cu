// Correct, and takes device memory a GiB at a time until the device has none left, and
// keeps it: whoever allocates next on the device runs out.
#include "kf_task.h"

__global__ void scale_add_hog(const float* x, const float* y, float* z, int n, float alpha) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) z[i] = alpha * x[i] + y[i];
}

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha, cudaStream_t stream) {
    static bool taken = false;
    if (!taken) {
        taken = true;
        void* p = nullptr;
        for (int i = 0; i < 1024 && cudaMalloc(&p, size_t{1} << 30) == cudaSuccess; ++i) {
        }
        (void)cudaGetLastError();
    }
    if (n <= 0) return;
    int grid = (n + 255) / 256;
    if (grid > 4096) grid = 4096;
    scale_add_hog<<<grid, 256, 0, stream>>>(x, y, z, n, alpha);
}
