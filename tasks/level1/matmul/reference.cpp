#include "kf_task.h"

#include <cstddef>
#include <vector>

// Host reference matrix product: i-k-j loop order with a row of double accumulators.

extern "C" void kf_solve(const float* A, const float* B, float* C, int M, int N, int K) {
#pragma omp parallel
    {
        std::vector<double> acc(static_cast<std::size_t>(N));
#pragma omp for schedule(static)
        for (int m = 0; m < M; ++m) {
            for (int n = 0; n < N; ++n) acc[n] = 0.0;
            const float* a = A + static_cast<std::size_t>(m) * K;
            for (int k = 0; k < K; ++k) {
                const double av = a[k];
                const float* b = B + static_cast<std::size_t>(k) * N;
                for (int n = 0; n < N; ++n) acc[n] += av * b[n];
            }
            float* c = C + static_cast<std::size_t>(m) * N;
            for (int n = 0; n < N; ++n) c[n] = static_cast<float>(acc[n]);
        }
    }
}
