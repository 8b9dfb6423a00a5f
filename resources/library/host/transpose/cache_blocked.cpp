#include "kf_task.h"

#include <cstddef>

// Host transpose, cache blocked: the matrix is cut into TB x TB tiles shared out by OpenMP
// (collapse(2)); within a tile the TB source lines and TB destination lines all stay in L1,
// so every cache line is read and written once. Edge tiles are clipped. Wins over the plain
// loop as soon as a column of x no longer fits in cache.

#define TB 32  // @kf tunable values(8, 16, 32, 64, 128)

extern "C" void kf_solve(const float* x, float* y, int rows, int cols) {
    const int tr = (rows + TB - 1) / TB, tc = (cols + TB - 1) / TB;
#pragma omp parallel for collapse(2) schedule(static)
    for (int bi = 0; bi < tr; ++bi)
        for (int bj = 0; bj < tc; ++bj) {
            const int r0 = bi * TB, r1 = (r0 + TB < rows) ? r0 + TB : rows;
            const int c0 = bj * TB, c1 = (c0 + TB < cols) ? c0 + TB : cols;
            for (int c = c0; c < c1; ++c) {
                float* out = y + static_cast<std::size_t>(c) * rows;
                for (int r = r0; r < r1; ++r) out[r] = x[static_cast<std::size_t>(r) * cols + c];
            }
        }
}
