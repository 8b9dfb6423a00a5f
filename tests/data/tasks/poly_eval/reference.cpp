#include "kf_task.h"

// Horner's rule per element: a chain of 64 multiply-adds; elements vectorise.
extern "C" void kf_solve(const float* x, float* y, int n) {
#pragma omp parallel for simd schedule(static)
    for (int i = 0; i < n; ++i) {
        const float t = x[i];
        float p = 1.0f / 65.0f;
        for (int k = 63; k >= 0; --k) p = p * t + 1.0f / (k + 1);
        y[i] = p;
    }
}
