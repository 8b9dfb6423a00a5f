#include "kf_task.h"

// Naive reference: one row after another; a double-precision sum of squares, then the scale.
extern "C" void kf_solve(const float* x, const float* w, float* y, int rows, int cols, float eps) {
    for (int r = 0; r < rows; ++r) {
        const float* xr = x + (long long)r * cols;
        double ss = 0;
        for (int c = 0; c < cols; ++c) ss += (double)xr[c] * xr[c];
        const float inv = 1.0f / std::sqrt((float)(ss / cols) + eps);
        for (int c = 0; c < cols; ++c) y[(long long)r * cols + c] = xr[c] * inv * w[c];
    }
}
