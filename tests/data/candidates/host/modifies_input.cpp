// Correct output, but it also overwrites the input x (through const_cast).
#include "kf_task.h"

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {
    float* xw = const_cast<float*>(x);
    for (int i = 0; i < n; ++i) {
        z[i] = alpha * x[i] + y[i];
        xw[i] = 0.0f;
    }
}
