// Baseline for the GPU benchmark: the matmul task computed by cuBLAS SGEMM (FP32, no TF32),
// evaluated on a copy of the task that allows cuBLAS, side by side with the search's best.
#include <cublas_v2.h>

extern "C" void kf_solve(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
    static cublasHandle_t handle = nullptr;
    if (!handle) {
        cublasCreate(&handle);
        cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH);  // plain FP32: no TF32 tensor-core downgrade
    }
    cublasSetStream(handle, stream);
    const float one = 1.0f, zero = 0.0f;
    // Row-major C = A B is column-major C^T = B^T A^T.
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, C, N);
}
