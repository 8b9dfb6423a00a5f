// Writes only the first half of the output.
#include "kf_task.h"

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {
    for (int i = 0; i < n / 2; ++i) z[i] = alpha * x[i] + y[i];
}
