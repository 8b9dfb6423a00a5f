#include "kf_task.h"
#include <cmath>
extern "C" void kf_solve(const float* x, const int* m, float* y, int n) {
    for (int i = 0; i < n; i++) {
        y[i] = m[i] != 0 ? std::log1p(std::exp(x[i])) : 0.0f;
    }
}
