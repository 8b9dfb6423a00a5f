#include "kf_task.h"

// Naive reference: one thread per looked-up row, copying it element by element.
__global__ void gather_reference(const float* table, const int* idx, float* out, int n, int d) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float* src = table + (long long)idx[i] * d;
    float* dst = out + (long long)i * d;
    for (int k = 0; k < d; ++k) dst[k] = src[k];
}

extern "C" void kf_solve(const float* table, const int* idx, float* out, int n, int d, int vocab, cudaStream_t stream) {
    (void)vocab;
    gather_reference<<<(n + 127) / 128, 128, 0, stream>>>(table, idx, out, n, d);
}
