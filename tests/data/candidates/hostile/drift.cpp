// Correct in its first calls (the correctness trials), then off by a fixed amount in every
// later call (the timed ones). The amount is written as KF_DRIFT so that one test can make it
// a rounding-sized error (a few times the tolerance) and another a gross one.
#include <cmath>

#include "kf_task.h"

#ifndef KF_DRIFT
#define KF_DRIFT 5e-4f
#endif

extern "C" void kf_solve(const float* x, float* y, int n) {
    static int calls = 0;
    const float drift = ++calls > 10 ? KF_DRIFT : 0.0f;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; ++i) {
        float s = 0;
        for (int k = 1; k <= 32; ++k) s += std::sin(static_cast<float>(k) * x[i]) / static_cast<float>(k);
        y[i] = s + drift;
    }
}
