#include "kf_task.h"

// Shared-memory tiled transpose: a TILE x TILE tile is read with coalesced rows of x into a
// padded shared array (TILE + 1 columns: no bank conflicts on the column reads), then written
// as coalesced rows of y. Blocks are TILE x BLOCK_ROWS threads; each thread moves
// TILE / BLOCK_ROWS elements each way. Tiles are numbered on a 1-D grid (no 65535 limit on
// either dimension) and edge tiles are bounds-checked, so any rows x cols work.

#define TILE 32        // @kf tunable values(32, 64)
#define BLOCK_ROWS 4   // @kf tunable values(4, 8, 16, 32)
// @kf constraint BLOCK_ROWS <= TILE
// @kf constraint TILE * BLOCK_ROWS <= 1024

__global__ void __launch_bounds__(TILE * BLOCK_ROWS) transpose_tiled_kernel(const float* __restrict__ x,
                                                                            float* __restrict__ y, int rows, int cols,
                                                                            int tiles_c) {
    __shared__ float tile[TILE][TILE + 1];
    const int tile_r = blockIdx.x / tiles_c;
    const int tile_c = blockIdx.x % tiles_c;
    const int r0 = tile_r * TILE, c0 = tile_c * TILE;

    // Read: thread (tx, ty) loads x[r0 + ty + k*BLOCK_ROWS][c0 + tx].
    const int c = c0 + threadIdx.x;
#pragma unroll
    for (int k = 0; k < TILE; k += BLOCK_ROWS) {
        const int r = r0 + threadIdx.y + k;
        if (r < rows && c < cols) tile[threadIdx.y + k][threadIdx.x] = __ldg(x + static_cast<size_t>(r) * cols + c);
    }
    __syncthreads();

    // Write: thread (tx, ty) stores y[c0 + ty + k*BLOCK_ROWS][r0 + tx] = tile[tx][ty + k].
    const int yr = r0 + threadIdx.x;  // column of y
#pragma unroll
    for (int k = 0; k < TILE; k += BLOCK_ROWS) {
        const int yc = c0 + threadIdx.y + k;  // row of y
        if (yc < cols && yr < rows) y[static_cast<size_t>(yc) * rows + yr] = tile[threadIdx.x][threadIdx.y + k];
    }
}

extern "C" void kf_solve(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const int tiles_r = (rows + TILE - 1) / TILE;
    const int tiles_c = (cols + TILE - 1) / TILE;
    const unsigned blocks = static_cast<unsigned>(static_cast<size_t>(tiles_r) * tiles_c);
    const dim3 block(TILE, BLOCK_ROWS);
    transpose_tiled_kernel<<<blocks, block, 0, stream>>>(x, y, rows, cols, tiles_c);
}
