#include "kf_task.h"

// Naive reference: one thread per column walking down it, one load in flight at a time.
__global__ void col_cumsum_reference(const float* x, float* y, int rows, int cols) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float s = 0.0f;
    for (int r = 0; r < rows; ++r) {
        s += x[(long long)r * cols + c];
        y[(long long)r * cols + c] = s;
    }
}

extern "C" void kf_solve(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    col_cumsum_reference<<<(cols + 127) / 128, 128, 0, stream>>>(x, y, rows, cols);
}
