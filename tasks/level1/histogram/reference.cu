#include "kf_task.h"

// Reference histogram: zero the bins, then a grid-stride loop where each block counts into a
// shared-memory histogram with shared atomics and adds it to the global bins at the end.

#define REF_BLOCK 256
#define REF_BINS 256

__global__ void histogram_zero_kernel(int32_t* counts) {
    if (threadIdx.x < REF_BINS) counts[threadIdx.x] = 0;
}

__global__ void histogram_reference_kernel(const uint8_t* __restrict__ x, int32_t* __restrict__ counts, size_t n) {
    __shared__ int32_t local[REF_BINS];
    for (int b = threadIdx.x; b < REF_BINS; b += REF_BLOCK) local[b] = 0;
    __syncthreads();
    const size_t stride = static_cast<size_t>(gridDim.x) * REF_BLOCK;
    for (size_t i = static_cast<size_t>(blockIdx.x) * REF_BLOCK + threadIdx.x; i < n; i += stride)
        atomicAdd(&local[x[i]], 1);
    __syncthreads();
    for (int b = threadIdx.x; b < REF_BINS; b += REF_BLOCK)
        if (local[b] != 0) atomicAdd(&counts[b], local[b]);
}

extern "C" void kf_solve(const uint8_t* x, int32_t* counts, int n, cudaStream_t stream) {
    histogram_zero_kernel<<<1, REF_BINS, 0, stream>>>(counts);
    const size_t count = static_cast<size_t>(n);
    size_t blocks = (count + REF_BLOCK - 1) / REF_BLOCK;
    if (blocks > 1024) blocks = 1024;
    if (blocks < 1) blocks = 1;
    histogram_reference_kernel<<<static_cast<unsigned>(blocks), REF_BLOCK, 0, stream>>>(x, counts, count);
}
