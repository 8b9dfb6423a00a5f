#include "kf_task.h"

#include <cmath>
#include <cstddef>

// Host scaled, masked row softmax: OpenMP over rows (ROW_CHUNK rows per dynamic chunk); per
// row a max over the kept scaled scores, a double sum of exp over the kept columns, then the
// normalising write (0 where masked). Fully masked rows are written as zeros. Baseline.

#define ROW_CHUNK 4  // @kf tunable values(1, 2, 4, 8, 16, 64)

extern "C" void kf_solve(const float* x, const bool* mask, float* y, int rows, int cols, float scale) {
#pragma omp parallel for schedule(dynamic, ROW_CHUNK)
    for (int r = 0; r < rows; ++r) {
        const std::size_t base = static_cast<std::size_t>(r) * cols;
        const float* row = x + base;
        const bool* keep = mask + base;
        float* out = y + base;
        float m = -INFINITY;
        for (int c = 0; c < cols; ++c)
            if (keep[c] && scale * row[c] > m) m = scale * row[c];
        if (m == -INFINITY) {
            for (int c = 0; c < cols; ++c) out[c] = 0.0f;
            continue;
        }
        double total = 0.0;
        for (int c = 0; c < cols; ++c) {
            const float e = keep[c] ? std::exp(scale * row[c] - m) : 0.0f;
            out[c] = e;
            total += e;
        }
        const float inv = static_cast<float>(1.0 / total);
        for (int c = 0; c < cols; ++c) out[c] *= inv;
    }
}
