#include "kf_task.h"

#include <cstddef>
#include <cstring>

// Host byte histogram with COPIES sub-tables per thread: consecutive bytes go to different
// copies, so runs of equal bytes do not serialise on one counter's store-to-load dependency;
// the copies are folded at the end, then merged across threads under a critical section.
// OpenMP static schedule over contiguous per-thread ranges.

#define COPIES 4  // @kf tunable values(1, 2, 4, 8)

extern "C" void kf_solve(const uint8_t* x, int32_t* counts, int n) {
    std::memset(counts, 0, 256 * sizeof(int32_t));
#pragma omp parallel
    {
        int32_t local[COPIES][256];
        std::memset(local, 0, sizeof(local));
#pragma omp for schedule(static) nowait
        for (int blk = 0; blk < n / COPIES; ++blk) {
            const uint8_t* p = x + static_cast<std::size_t>(blk) * COPIES;
            for (int k = 0; k < COPIES; ++k) ++local[k][p[k]];
        }
#pragma omp single nowait
        for (int i = n / COPIES * COPIES; i < n; ++i) ++local[0][x[i]];  // tail (< COPIES bytes)
        for (int k = 1; k < COPIES; ++k)
            for (int b = 0; b < 256; ++b) local[0][b] += local[k][b];
#pragma omp critical
        for (int b = 0; b < 256; ++b) counts[b] += local[0][b];
    }
}
