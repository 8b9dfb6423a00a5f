// Correct and honest: the baseline every hostile candidate is followed by.
#include <cmath>

#include "kf_task.h"

extern "C" void kf_solve(const float* x, float* y, int n) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; ++i) {
        float s = 0;
        for (int k = 1; k <= 32; ++k) s += std::sin(static_cast<float>(k) * x[i]) / static_cast<float>(k);
        y[i] = s;
    }
}
