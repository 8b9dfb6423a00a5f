#include "kf_task.h"

#include <cmath>
#include <cstddef>

// Host GELU, vectorisation-friendly: the array is cut into BLOCK-element blocks shared out by
// OpenMP; inside a block, a first loop computes t = -2u into a small stack buffer (pure
// arithmetic, vectorises), a second applies expf, and a third forms x / (1 + e), the
// algebraically equal sigmoid form of the tanh GELU. Splitting the exp from the arithmetic
// lets the compiler vectorise what it can and keeps the buffer in L1.

#define BLOCK 1024  // @kf tunable values(256, 512, 1024, 2048, 4096)

extern "C" void kf_solve(const float* x, float* y, int n) {
    const int nb = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < nb; ++b) {
        const int i0 = b * BLOCK;
        const int len = (n - i0) < BLOCK ? (n - i0) : BLOCK;
        float t[BLOCK];
        const float* xs = x + i0;
        float* ys = y + i0;
        for (int i = 0; i < len; ++i) {
            const float v = xs[i];
            t[i] = -1.5957691216057308f * (v + 0.044715f * v * v * v);
        }
        for (int i = 0; i < len; ++i) t[i] = std::exp(t[i]);
        for (int i = 0; i < len; ++i) ys[i] = xs[i] / (1.0f + t[i]);
    }
}
