#include "kf_task.h"

#include <cstddef>
#include <cstring>

// Host byte histogram: each OpenMP thread fills a private 256-bin table over its CHUNK-byte
// static chunks, then the tables are added into counts under a critical section. No atomics
// in the hot loop. Baseline.

#define CHUNK 65536  // @kf tunable values(4096, 16384, 65536, 262144)

extern "C" void kf_solve(const uint8_t* x, int32_t* counts, int n) {
    std::memset(counts, 0, 256 * sizeof(int32_t));
#pragma omp parallel
    {
        int32_t local[256];
        std::memset(local, 0, sizeof(local));
#pragma omp for schedule(static, CHUNK) nowait
        for (int i = 0; i < n; ++i) ++local[x[i]];
#pragma omp critical
        for (int b = 0; b < 256; ++b) counts[b] += local[b];
    }
}
