#include "kf_task.h"

#include <cstddef>

// Host SGEMM, plain OpenMP over rows of C with the i-k-j loop order: the innermost loop
// streams a row of B and a row of C with unit stride, so it vectorises without reductions.
// ROW_CHUNK rows per scheduling chunk. Good for small problems; for large ones B is re-read
// from memory for every row, which the cache-blocked pattern avoids.

#define ROW_CHUNK 4  // @kf tunable values(1, 2, 4, 8, 16)

extern "C" void kf_solve(const float* A, const float* B, float* C, int M, int N, int K) {
#pragma omp parallel for schedule(dynamic, ROW_CHUNK)
    for (int i = 0; i < M; ++i) {
        float* c = C + static_cast<std::size_t>(i) * N;
        for (int j = 0; j < N; ++j) c[j] = 0.0f;
        const float* a = A + static_cast<std::size_t>(i) * K;
        for (int k = 0; k < K; ++k) {
            const float av = a[k];
            const float* b = B + static_cast<std::size_t>(k) * N;
            for (int j = 0; j < N; ++j) c[j] += av * b[j];
        }
    }
}
