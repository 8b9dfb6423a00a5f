#include "kf_task.h"

#include <cmath>
#include <cstddef>

// Host reference layer norm: two passes per row in double.

extern "C" void kf_solve(const float* x, const float* gamma, const float* beta, float* y, int rows, int cols,
                         float eps) {
#pragma omp parallel for schedule(static)
    for (int r = 0; r < rows; ++r) {
        const float* row = x + static_cast<std::size_t>(r) * cols;
        float* out = y + static_cast<std::size_t>(r) * cols;
        double mean = 0.0;
        for (int c = 0; c < cols; ++c) mean += row[c];
        mean /= cols;
        double var = 0.0;
        for (int c = 0; c < cols; ++c) {
            double d = row[c] - mean;
            var += d * d;
        }
        var /= cols;
        const double rstd = 1.0 / std::sqrt(var + static_cast<double>(eps));
        for (int c = 0; c < cols; ++c) out[c] = static_cast<float>((row[c] - mean) * rstd * gamma[c] + beta[c]);
    }
}
