#include "kf_task.h"

// Naive reference: one thread per output element, the inner product read from global memory.
__global__ void linear_tanh_reference(const float* A, const float* B, const float* bias, float* C, int M, int N, int K) {
    const int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y;
    if (n >= N || m >= M) return;
    float acc = 0;
    for (int k = 0; k < K; ++k) acc += A[(long long)m * K + k] * B[(long long)k * N + n];
    C[(long long)m * N + n] = tanhf(acc + bias[n]);
}

extern "C" void kf_solve(const float* A, const float* B, const float* bias, float* C, int M, int N, int K,
                         cudaStream_t stream) {
    linear_tanh_reference<<<dim3((N + 127) / 128, M), 128, 0, stream>>>(A, B, bias, C, M, N, K);
}
