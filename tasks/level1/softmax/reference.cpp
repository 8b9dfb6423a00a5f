#include "kf_task.h"

#include <cmath>
#include <cstddef>

// Host reference softmax: per row max, exponentials, sum in double, normalise.

extern "C" void kf_solve(const float* x, float* y, int rows, int cols) {
#pragma omp parallel for schedule(static)
    for (int r = 0; r < rows; ++r) {
        const float* row = x + static_cast<std::size_t>(r) * cols;
        float* out = y + static_cast<std::size_t>(r) * cols;
        float m = row[0];
        for (int c = 1; c < cols; ++c) m = std::fmax(m, row[c]);
        double total = 0.0;
        for (int c = 0; c < cols; ++c) {
            float e = std::exp(row[c] - m);
            out[c] = e;
            total += e;
        }
        for (int c = 0; c < cols; ++c) out[c] = static_cast<float>(static_cast<double>(out[c]) / total);
    }
}
