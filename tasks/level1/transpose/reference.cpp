#include "kf_task.h"

#include <cstddef>

// Host reference transpose.

extern "C" void kf_solve(const float* x, float* y, int rows, int cols) {
#pragma omp parallel for schedule(static)
    for (int c = 0; c < cols; ++c)
        for (int r = 0; r < rows; ++r)
            y[static_cast<std::size_t>(c) * rows + r] = x[static_cast<std::size_t>(r) * cols + c];
}
