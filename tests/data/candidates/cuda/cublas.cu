// Computes with cuBLAS (z = y; z += alpha * x), which this task does not allow. Built without
// -lcublas, so the library keeps undefined cublas* symbols for the evaluator to find.
#include "kf_task.h"

#include <cublas_v2.h>

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha, cudaStream_t stream) {
    static cublasHandle_t handle = nullptr;
    if (!handle && cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return;
    cublasSetStream(handle, stream);
    cublasScopy(handle, n, y, 1, z, 1);
    cublasSaxpy(handle, n, &alpha, x, 1, z, 1);
}
