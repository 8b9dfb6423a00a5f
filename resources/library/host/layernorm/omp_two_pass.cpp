#include "kf_task.h"

#include <cmath>
#include <cstddef>

// Host layer norm: OpenMP over rows (ROW_CHUNK rows per dynamic chunk); per row a double
// sum for the mean, a double sum of squared deviations for the biased variance (two-pass,
// no cancellation), then the normalise/scale/shift loop (vectorisable). Baseline.

#define ROW_CHUNK 4  // @kf tunable values(1, 2, 4, 8, 16, 64)

extern "C" void kf_solve(const float* x, const float* gamma, const float* beta, float* y, int rows, int cols,
                         float eps) {
#pragma omp parallel for schedule(dynamic, ROW_CHUNK)
    for (int r = 0; r < rows; ++r) {
        const float* row = x + static_cast<std::size_t>(r) * cols;
        float* out = y + static_cast<std::size_t>(r) * cols;
        double s = 0.0;
        for (int c = 0; c < cols; ++c) s += row[c];
        const float mean = static_cast<float>(s / cols);
        double q = 0.0;
        for (int c = 0; c < cols; ++c) {
            const double d = static_cast<double>(row[c]) - mean;
            q += d * d;
        }
        const float rstd = static_cast<float>(1.0 / std::sqrt(q / cols + eps));
        for (int c = 0; c < cols; ++c) out[c] = (row[c] - mean) * rstd * gamma[c] + beta[c];
    }
}
