#include "kf_task.h"

#include <cmath>
#include <cstddef>

// Host layer norm written for SIMD: the mean and variance sums use LANES independent float
// partial accumulators (vectorisable without -ffast-math; scalar tail for the remainder),
// still two-pass so the variance has no cancellation; the output loop is a plain fused
// multiply-add the compiler vectorises. OpenMP static schedule over rows.

#define LANES 8  // @kf tunable values(4, 8, 16, 32)

extern "C" void kf_solve(const float* x, const float* gamma, const float* beta, float* y, int rows, int cols,
                         float eps) {
#pragma omp parallel for schedule(static)
    for (int r = 0; r < rows; ++r) {
        const float* row = x + static_cast<std::size_t>(r) * cols;
        float* out = y + static_cast<std::size_t>(r) * cols;
        const int body = cols / LANES * LANES;
        float acc[LANES];

        for (int l = 0; l < LANES; ++l) acc[l] = 0.0f;
        for (int c = 0; c < body; c += LANES)
            for (int l = 0; l < LANES; ++l) acc[l] += row[c + l];
        float s = 0.0f;
        for (int l = 0; l < LANES; ++l) s += acc[l];
        for (int c = body; c < cols; ++c) s += row[c];
        const float mean = s / cols;

        for (int l = 0; l < LANES; ++l) acc[l] = 0.0f;
        for (int c = 0; c < body; c += LANES)
            for (int l = 0; l < LANES; ++l) {
                const float d = row[c + l] - mean;
                acc[l] += d * d;
            }
        float q = 0.0f;
        for (int l = 0; l < LANES; ++l) q += acc[l];
        for (int c = body; c < cols; ++c) {
            const float d = row[c] - mean;
            q += d * d;
        }
        const float rstd = 1.0f / std::sqrt(q / cols + eps);
        for (int c = 0; c < cols; ++c) out[c] = (row[c] - mean) * rstd * gamma[c] + beta[c];
    }
}
