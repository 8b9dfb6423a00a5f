// Wrong: forgets alpha (z = x + y).
#include "kf_task.h"

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {
    (void)alpha;
    for (int i = 0; i < n; ++i) z[i] = x[i] + y[i];
}
