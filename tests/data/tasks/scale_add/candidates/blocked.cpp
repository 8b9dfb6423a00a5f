// A host candidate with tunables, so that the search has something to tune on this task.
#include "kf_task.h"

#define CHUNK 4096  // @kf tunable values(256, 1024, 4096, 16384)
#define UNROLL 4    // @kf tunable values(1, 2, 4, 8)

extern "C" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {
#pragma omp parallel for schedule(static)
    for (int b = 0; b < n; b += CHUNK) {
        int e = b + CHUNK < n ? b + CHUNK : n;
        int i = b;
        for (; i + UNROLL <= e; i += UNROLL)
            for (int u = 0; u < UNROLL; ++u) z[i + u] = alpha * x[i + u] + y[i + u];
        for (; i < e; ++i) z[i] = alpha * x[i] + y[i];
    }
}
