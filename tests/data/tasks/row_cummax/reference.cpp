#include "kf_task.h"

#include <cmath>

// Naive reference: one row after another.
extern "C" void kf_solve(const float* x, float* y, int rows, int cols) {
    for (int r = 0; r < rows; ++r) {
        float m = -INFINITY;
        for (int c = 0; c < cols; ++c) {
            m = std::fmax(m, std::fabs(x[(long long)r * cols + c]));
            y[(long long)r * cols + c] = m;
        }
    }
}
