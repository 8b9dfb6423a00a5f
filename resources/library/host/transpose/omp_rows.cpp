#include "kf_task.h"

#include <cstddef>

// Host transpose, plain OpenMP over output rows: y[c, :] is written contiguously while
// x[:, c] is read with stride cols. ROW_CHUNK output rows per dynamic chunk. Baseline; for
// large matrices every read touches a new cache line, which the blocked pattern avoids.

#define ROW_CHUNK 8  // @kf tunable values(1, 4, 8, 32, 128)

extern "C" void kf_solve(const float* x, float* y, int rows, int cols) {
#pragma omp parallel for schedule(dynamic, ROW_CHUNK)
    for (int c = 0; c < cols; ++c) {
        float* out = y + static_cast<std::size_t>(c) * rows;
        for (int r = 0; r < rows; ++r) out[r] = x[static_cast<std::size_t>(r) * cols + c];
    }
}
