#include "kf_task.h"

#include <cmath>
#include <cstddef>

// Host reference masked softmax; a row with no kept column is all zeros.

extern "C" void kf_solve(const float* x, const bool* mask, float* y, int rows, int cols, float scale) {
#pragma omp parallel for schedule(static)
    for (int r = 0; r < rows; ++r) {
        const std::size_t base = static_cast<std::size_t>(r) * cols;
        const float* row = x + base;
        const bool* keep = mask + base;
        float* out = y + base;
        bool any = false;
        float m = 0.0f;
        for (int c = 0; c < cols; ++c) {
            if (!keep[c]) continue;
            const float s = scale * row[c];
            if (!any || s > m) m = s;
            any = true;
        }
        if (!any) {
            for (int c = 0; c < cols; ++c) out[c] = 0.0f;
            continue;
        }
        double total = 0.0;
        for (int c = 0; c < cols; ++c) {
            if (keep[c]) {
                const float e = std::exp(scale * row[c] - m);
                out[c] = e;
                total += e;
            } else {
                out[c] = 0.0f;
            }
        }
        for (int c = 0; c < cols; ++c)
            if (keep[c]) out[c] = static_cast<float>(static_cast<double>(out[c]) / total);
    }
}
