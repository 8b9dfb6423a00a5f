// Correct.
#include "kf_task.h"

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; ++i) z[i] = alpha * x[i] + y[i];
}
