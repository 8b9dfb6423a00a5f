#include "kf_task.h"

#include <cstddef>
#include <vector>

// Host row-wise inclusive scan, parallel inside rows: each row is cut into CHUNK-element
// chunks. Pass 1 sums every (row, chunk) in parallel; a short serial pass turns the chunk
// sums of each row into exclusive offsets; pass 2 scans every chunk in parallel starting
// from its offset. Reads x twice but keeps all cores busy even for a few very long rows.

#define CHUNK 4096  // @kf tunable values(256, 1024, 4096, 16384)

extern "C" void kf_solve(const float* x, float* y, int rows, int cols) {
    const int nch = (cols + CHUNK - 1) / CHUNK;
    const long long total = static_cast<long long>(rows) * nch;
    std::vector<double> offs(static_cast<std::size_t>(total));

#pragma omp parallel for schedule(static)
    for (long long t = 0; t < total; ++t) {
        const int r = static_cast<int>(t / nch), k = static_cast<int>(t % nch);
        const int c0 = k * CHUNK, c1 = (c0 + CHUNK < cols) ? c0 + CHUNK : cols;
        const float* row = x + static_cast<std::size_t>(r) * cols;
        double s = 0.0;
        for (int c = c0; c < c1; ++c) s += row[c];
        offs[static_cast<std::size_t>(t)] = s;
    }
#pragma omp parallel for schedule(static)
    for (int r = 0; r < rows; ++r) {  // chunk sums -> exclusive offsets
        double run = 0.0;
        for (int k = 0; k < nch; ++k) {
            double& o = offs[static_cast<std::size_t>(r) * nch + k];
            const double s = o;
            o = run;
            run += s;
        }
    }
#pragma omp parallel for schedule(static)
    for (long long t = 0; t < total; ++t) {
        const int r = static_cast<int>(t / nch), k = static_cast<int>(t % nch);
        const int c0 = k * CHUNK, c1 = (c0 + CHUNK < cols) ? c0 + CHUNK : cols;
        const std::size_t base = static_cast<std::size_t>(r) * cols;
        double acc = offs[static_cast<std::size_t>(t)];
        for (int c = c0; c < c1; ++c) {
            acc += x[base + c];
            y[base + c] = static_cast<float>(acc);
        }
    }
}
