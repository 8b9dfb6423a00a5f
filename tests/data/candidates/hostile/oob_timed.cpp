// Correct, and within bounds in its first calls (the correctness trials); from then on it also
// writes a little past the end of its output, inside the canary after it.
#include <cmath>

#include "kf_task.h"

extern "C" void kf_solve(const float* x, float* y, int n) {
    static int calls = 0;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; ++i) {
        float s = 0;
        for (int k = 1; k <= 32; ++k) s += std::sin(static_cast<float>(k) * x[i]) / static_cast<float>(k);
        y[i] = s;
    }
    if (++calls > 6) y[n + 16] = 0.0f;
}
