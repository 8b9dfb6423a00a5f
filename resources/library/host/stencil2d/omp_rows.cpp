#include "kf_task.h"

#include <cstddef>

// Host 5-point Jacobi stencil: OpenMP over rows (ROW_CHUNK rows per static chunk), one
// branchy loop per row (border test per cell). Baseline.

#define ROW_CHUNK 16  // @kf tunable values(1, 4, 16, 64)

extern "C" void kf_solve(const float* x, float* y, int H, int W) {
#pragma omp parallel for schedule(static, ROW_CHUNK)
    for (int i = 0; i < H; ++i) {
        for (int j = 0; j < W; ++j) {
            const std::size_t idx = static_cast<std::size_t>(i) * W + j;
            if (i == 0 || i == H - 1 || j == 0 || j == W - 1)
                y[idx] = x[idx];
            else
                y[idx] = 0.2f * (x[idx] + x[idx - W] + x[idx + W] + x[idx - 1] + x[idx + 1]);
        }
    }
}
