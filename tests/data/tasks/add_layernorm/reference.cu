#include "kf_task.h"

// Naive reference: one thread per row (uncoalesced), three passes over its row.
__global__ void add_layernorm_reference(const float* x, const float* res, const float* g, const float* b, float* y, int rows,
                                        int cols, float eps) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const long long base = (long long)r * cols;
    float sum = 0;
    for (int c = 0; c < cols; ++c) sum += x[base + c] + res[base + c];
    const float mean = sum / cols;
    float var = 0;
    for (int c = 0; c < cols; ++c) {
        const float d = x[base + c] + res[base + c] - mean;
        var += d * d;
    }
    var /= cols;
    for (int c = 0; c < cols; ++c) y[base + c] = (x[base + c] + res[base + c] - mean) / sqrtf(var + eps) * g[c] + b[c];
}

extern "C" void kf_solve(const float* x, const float* res, const float* g, const float* b, float* y, int rows, int cols, float eps,
                         cudaStream_t stream) {
    add_layernorm_reference<<<(rows + 127) / 128, 128, 0, stream>>>(x, res, g, b, y, rows, cols, eps);
}
