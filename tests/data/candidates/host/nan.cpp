// Correct except for one element, which it sets to NaN.
#include "kf_task.h"

#include <limits>

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {
    for (int i = 0; i < n; ++i) z[i] = alpha * x[i] + y[i];
    if (n > 0) z[n / 3] = std::numeric_limits<float>::quiet_NaN();
}
