#include "kf_task.h"

#include <cstddef>

// Host SGEMM with cache blocking: C is split into MB x NB tiles distributed over OpenMP
// threads (collapse(2)); each tile walks K in KB-deep panels so the KB x NB panel of B and
// the MB x NB tile of C stay in L1/L2 while the i-k-j micro-loop (unit-stride, vectorisable
// inner loop over j) runs. Edge tiles are clipped with min(), so any M, N, K work. Wins over
// the plain loop once B no longer fits in cache.

#define MB 32   // @kf tunable values(16, 32, 64, 128)
#define NB 256  // @kf tunable values(64, 128, 256, 512)
#define KB 128  // @kf tunable values(32, 64, 128, 256)

static inline int imin(int a, int b) { return a < b ? a : b; }

extern "C" void kf_solve(const float* A, const float* B, float* C, int M, int N, int K) {
    const int mt = (M + MB - 1) / MB, nt = (N + NB - 1) / NB;
#pragma omp parallel for collapse(2) schedule(dynamic, 1)
    for (int ti = 0; ti < mt; ++ti) {
        for (int tj = 0; tj < nt; ++tj) {
            const int i0 = ti * MB, i1 = imin(M, i0 + MB);
            const int j0 = tj * NB, j1 = imin(N, j0 + NB);
            for (int i = i0; i < i1; ++i) {
                float* c = C + static_cast<std::size_t>(i) * N;
                for (int j = j0; j < j1; ++j) c[j] = 0.0f;
            }
            for (int k0 = 0; k0 < K; k0 += KB) {
                const int k1 = imin(K, k0 + KB);
                for (int i = i0; i < i1; ++i) {
                    float* c = C + static_cast<std::size_t>(i) * N;
                    const float* a = A + static_cast<std::size_t>(i) * K;
                    for (int k = k0; k < k1; ++k) {
                        const float av = a[k];
                        const float* b = B + static_cast<std::size_t>(k) * N;
                        for (int j = j0; j < j1; ++j) c[j] += av * b[j];
                    }
                }
            }
        }
    }
}
