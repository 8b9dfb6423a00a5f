#include "kf_task.h"

#include <cmath>
#include <cstddef>

// Host scaled, masked row softmax written for SIMD: the mask is turned into arithmetic
// (masked scores become -inf by a select, exp(-inf) = 0), and the max and sum are carried in
// LANES independent partial accumulators, so the loops have no data-dependent branches and
// no single loop-carried dependency; scalar tails for the remainder. Fully masked rows are
// written as zeros. OpenMP static schedule over rows.

#define LANES 8  // @kf tunable values(4, 8, 16, 32)

extern "C" void kf_solve(const float* x, const bool* mask, float* y, int rows, int cols, float scale) {
#pragma omp parallel for schedule(static)
    for (int r = 0; r < rows; ++r) {
        const std::size_t base = static_cast<std::size_t>(r) * cols;
        const float* row = x + base;
        const bool* keep = mask + base;
        float* out = y + base;
        const int body = cols / LANES * LANES;

        float acc[LANES];
        for (int l = 0; l < LANES; ++l) acc[l] = -INFINITY;
        for (int c = 0; c < body; c += LANES)
            for (int l = 0; l < LANES; ++l) {
                const float s = keep[c + l] ? scale * row[c + l] : -INFINITY;
                acc[l] = s > acc[l] ? s : acc[l];
            }
        float m = -INFINITY;
        for (int l = 0; l < LANES; ++l) m = acc[l] > m ? acc[l] : m;
        for (int c = body; c < cols; ++c) {
            const float s = keep[c] ? scale * row[c] : -INFINITY;
            m = s > m ? s : m;
        }
        if (m == -INFINITY) {
            for (int c = 0; c < cols; ++c) out[c] = 0.0f;
            continue;
        }

        for (int l = 0; l < LANES; ++l) acc[l] = 0.0f;
        for (int c = 0; c < body; c += LANES)
            for (int l = 0; l < LANES; ++l) {
                const float e = keep[c + l] ? std::exp(scale * row[c + l] - m) : 0.0f;
                out[c + l] = e;
                acc[l] += e;
            }
        float total = 0.0f;
        for (int l = 0; l < LANES; ++l) total += acc[l];
        for (int c = body; c < cols; ++c) {
            const float e = keep[c] ? std::exp(scale * row[c] - m) : 0.0f;
            out[c] = e;
            total += e;
        }
        const float inv = 1.0f / total;
        for (int c = 0; c < cols; ++c) out[c] *= inv;
    }
}
