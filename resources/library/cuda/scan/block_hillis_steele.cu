#include "kf_task.h"

// Row-wise inclusive scan, one block per row, classic shared-memory Hillis-Steele scan: the
// row is walked in tiles of BLOCK elements (one per thread, coalesced); each tile is scanned
// in log2(BLOCK) steps over a double-buffered shared array (each step adds the value `off`
// places to the left), and a running carry (the tile total) links the tiles. Textbook and
// obviously correct; O(n log n) shared-memory work, so it trails the register/shuffle
// variants on long rows but is a solid baseline for medium rows.

#define BLOCK 256  // @kf tunable values(32, 64, 128, 256, 512, 1024)

__global__ void __launch_bounds__(BLOCK) scan_hs_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float buf[2][BLOCK];
    const int t = threadIdx.x;
    const size_t base = static_cast<size_t>(blockIdx.x) * cols;
    const float* row = x + base;
    float* out = y + base;

    float carry = 0.0f;
    for (int c0 = 0; c0 < cols; c0 += BLOCK) {
        const int c = c0 + t;
        int in = 0;
        buf[0][t] = c < cols ? __ldg(row + c) : 0.0f;
        __syncthreads();
        for (int off = 1; off < BLOCK; off <<= 1) {
            const float v = buf[in][t] + (t >= off ? buf[in][t - off] : 0.0f);
            buf[in ^ 1][t] = v;
            in ^= 1;
            __syncthreads();
        }
        if (c < cols) out[c] = carry + buf[in][t];
        carry += buf[in][BLOCK - 1];
        __syncthreads();  // every thread has read buf before the next tile overwrites it
    }
}

extern "C" void kf_solve(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    scan_hs_kernel<<<rows, BLOCK, 0, stream>>>(x, y, cols);
}
