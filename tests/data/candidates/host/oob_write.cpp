// Correct, but also writes z[n + 7], past the end of the output (inside the 4 KB canary).
#include "kf_task.h"

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {
    for (int i = 0; i < n; ++i) z[i] = alpha * x[i] + y[i];
    z[n + 7] = 1.0f;
}
