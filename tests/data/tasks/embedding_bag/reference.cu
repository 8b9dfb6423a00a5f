#include "kf_task.h"

// Naive reference: one thread per bag, adding its looked-up rows element by element.
__global__ void bag_reference(const float* table, const int* idx, float* out, int B, int L, int d) {
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= B) return;
    float* o = out + (size_t)b * d;
    for (int k = 0; k < d; ++k) o[k] = 0.0f;
    for (int j = 0; j < L; ++j) {
        const float* row = table + (size_t)idx[b * L + j] * d;
        for (int k = 0; k < d; ++k) o[k] += row[k];
    }
}

extern "C" void kf_solve(const float* table, const int* idx, float* out, int B, int L, int d, int vocab, cudaStream_t stream) {
    (void)vocab;
    bag_reference<<<(B + 127) / 128, 128, 0, stream>>>(table, idx, out, B, L, d);
}
