#include "kf_task.h"

// Shared-memory tiled transpose with an XOR-swizzled 32 x 32 tile instead of padding: the
// element (row j, column i) of the tile is stored at tile[j][i ^ j], so both the row-wise
// writes (from coalesced reads of x) and the column-wise reads (for coalesced writes of y)
// hit 32 distinct banks, while the tile keeps its 4 KB power-of-two footprint. Blocks are
// 32 x BLOCK_ROWS threads, each moving 32 / BLOCK_ROWS elements each way. Tiles are numbered
// on a 1-D grid and edges are bounds-checked, so any shape works.

#define BLOCK_ROWS 8  // @kf tunable values(1, 2, 4, 8, 16, 32)

#define TILE 32

__global__ void __launch_bounds__(TILE * BLOCK_ROWS) transpose_swizzle_kernel(const float* __restrict__ x,
                                                                              float* __restrict__ y, int rows,
                                                                              int cols, int tiles_x) {
    __shared__ float tile[TILE][TILE];
    const int tr = blockIdx.x / tiles_x, tc = blockIdx.x % tiles_x;
    const int tx = threadIdx.x, ty = threadIdx.y;

    const int c = tc * TILE + tx;
#pragma unroll
    for (int j = ty; j < TILE; j += BLOCK_ROWS) {
        const int r = tr * TILE + j;
        if (r < rows && c < cols) tile[j][tx ^ j] = __ldg(x + static_cast<size_t>(r) * cols + c);
    }
    __syncthreads();
    const int yr = tr * TILE + tx;  // column of y = row of x
#pragma unroll
    for (int j = ty; j < TILE; j += BLOCK_ROWS) {
        const int yc = tc * TILE + j;  // row of y = column of x
        if (yc < cols && yr < rows) y[static_cast<size_t>(yc) * rows + yr] = tile[tx][j ^ tx];
    }
}

extern "C" void kf_solve(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const int tiles_x = (cols + TILE - 1) / TILE, tiles_y = (rows + TILE - 1) / TILE;
    const long long tiles = static_cast<long long>(tiles_x) * tiles_y;
    transpose_swizzle_kernel<<<static_cast<unsigned>(tiles), dim3(TILE, BLOCK_ROWS), 0, stream>>>(x, y, rows, cols,
                                                                                                 tiles_x);
}
