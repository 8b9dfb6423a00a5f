#include "kf_task.h"

#include <cstddef>

// Host row sum: OpenMP over rows (ROW_CHUNK rows per dynamic chunk), each row summed with a
// single double accumulator (accurate, but the loop-carried dependency keeps it scalar).
// Simple baseline.

#define ROW_CHUNK 16  // @kf tunable values(1, 4, 16, 64, 256)

extern "C" void kf_solve(const float* x, float* y, int rows, int cols) {
#pragma omp parallel for schedule(dynamic, ROW_CHUNK)
    for (int r = 0; r < rows; ++r) {
        const float* row = x + static_cast<std::size_t>(r) * cols;
        double s = 0.0;
        for (int c = 0; c < cols; ++c) s += row[c];
        y[r] = static_cast<float>(s);
    }
}
