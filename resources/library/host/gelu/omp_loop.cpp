#include "kf_task.h"

#include <cmath>
#include <cstddef>

// Host GELU (tanh form): one OpenMP parallel loop with a static schedule in CHUNK-element
// chunks, std::tanh per element. The baseline; chunking trades scheduling overhead against
// load balance.

#define CHUNK 4096  // @kf tunable values(256, 1024, 4096, 16384, 65536)

extern "C" void kf_solve(const float* x, float* y, int n) {
#pragma omp parallel for schedule(static, CHUNK)
    for (int i = 0; i < n; ++i) {
        const float v = x[i];
        const float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
        y[i] = 0.5f * v * (1.0f + std::tanh(u));
    }
}
