#include "kf_task.h"

#include <cmath>
#include <cstddef>

// Row softmax on the CPU written for auto-vectorisation: the max and the sum are carried in
// LANES independent partial accumulators (breaking the loop-carried dependency so the
// compiler can use SIMD registers without -ffast-math), with a scalar tail for cols not a
// multiple of LANES. OpenMP static schedule over rows. Wins over the plain loop when rows
// are long enough for the lane-parallel reductions to matter.

#define LANES 8  // @kf tunable values(4, 8, 16, 32)

extern "C" void kf_solve(const float* x, float* y, int rows, int cols) {
#pragma omp parallel for schedule(static)
    for (int r = 0; r < rows; ++r) {
        const float* row = x + static_cast<std::size_t>(r) * cols;
        float* out = y + static_cast<std::size_t>(r) * cols;
        const int body = cols / LANES * LANES;

        float mv[LANES];
        for (int l = 0; l < LANES; ++l) mv[l] = -INFINITY;
        for (int c = 0; c < body; c += LANES)
            for (int l = 0; l < LANES; ++l) mv[l] = row[c + l] > mv[l] ? row[c + l] : mv[l];
        float m = -INFINITY;
        for (int l = 0; l < LANES; ++l) m = mv[l] > m ? mv[l] : m;
        for (int c = body; c < cols; ++c) m = row[c] > m ? row[c] : m;

        float sv[LANES];
        for (int l = 0; l < LANES; ++l) sv[l] = 0.0f;
        for (int c = 0; c < body; c += LANES)
            for (int l = 0; l < LANES; ++l) {
                const float e = std::exp(row[c + l] - m);
                out[c + l] = e;
                sv[l] += e;
            }
        float s = 0.0f;
        for (int l = 0; l < LANES; ++l) s += sv[l];
        for (int c = body; c < cols; ++c) {
            const float e = std::exp(row[c] - m);
            out[c] = e;
            s += e;
        }
        const float inv = 1.0f / s;
        for (int c = 0; c < cols; ++c) out[c] *= inv;
    }
}
