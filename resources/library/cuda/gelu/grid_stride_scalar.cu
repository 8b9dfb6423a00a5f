#include "kf_task.h"

#include <cstddef>

// GELU (tanh form), scalar grid-stride loop: a grid sized to BLOCKS_PER_SM blocks per SM
// walks the array with stride gridDim * BLOCK, one float per thread per iteration. Needs no
// alignment and has no tail case; the baseline every vectorised variant is compared to. On
// large arrays it is usually a little slower than float4 because of the extra instructions.

#define BLOCK 256        // @kf tunable values(128, 256, 512, 1024)
#define BLOCKS_PER_SM 8  // @kf tunable values(1, 2, 4, 8, 16, 32)
// @kf constraint BLOCK * BLOCKS_PER_SM <= 2048 * 4

__device__ __forceinline__ float gelu_tanh(float v) {
    const float k0 = 0.7978845608028654f;  // sqrt(2 / pi)
    const float k1 = 0.044715f;
    const float u = k0 * fmaf(k1 * v, v * v, v);
    return 0.5f * v * (1.0f + tanhf(u));
}

__global__ void __launch_bounds__(BLOCK) gelu_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n) {
    const size_t stride = static_cast<size_t>(gridDim.x) * BLOCK;
    for (size_t i = static_cast<size_t>(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += stride)
        y[i] = gelu_tanh(__ldg(x + i));
}

extern "C" void kf_solve(const float* x, float* y, int n, cudaStream_t stream) {
    if (n <= 0) return;
    static int sms = 0;
    if (sms == 0) {
        int dev = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        if (sms <= 0) sms = 132;
    }
    const size_t need = (static_cast<size_t>(n) + BLOCK - 1) / BLOCK;
    size_t grid = static_cast<size_t>(sms) * BLOCKS_PER_SM;
    if (grid > need) grid = need;
    gelu_kernel<<<static_cast<unsigned>(grid), BLOCK, 0, stream>>>(x, y, static_cast<size_t>(n));
}
