#include "kf_task.h"

// Classic shared-memory tiled SGEMM: a TILE x TILE thread block computes a TILE x TILE tile of
// C, one output per thread. K is walked in steps of TILE: each thread loads one element of the
// A tile and one of the B tile (zero outside the matrix), the block syncs, and every thread
// does TILE FMAs from shared memory (A reads are warp broadcasts, B reads are consecutive
// words: no bank conflicts). Works for any M, N, K. The simplest correct tiled GEMM: a good
// baseline and a fallback for tiny/odd shapes, but limited by shared-memory bandwidth (2 shared
// loads per FMA) on large problems.

#define TILE 16  // @kf tunable values(8, 16, 32)

__global__ void __launch_bounds__(TILE * TILE) sgemm_smem_kernel(const float* __restrict__ A,
                                                                 const float* __restrict__ B, float* __restrict__ C,
                                                                 int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        const int ak = k0 + tx, bk = k0 + ty;
        As[ty][tx] = (row < M && ak < K) ? __ldg(A + static_cast<size_t>(row) * K + ak) : 0.0f;
        Bs[ty][tx] = (bk < K && col < N) ? __ldg(B + static_cast<size_t>(bk) * N + col) : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);
        __syncthreads();
    }
    if (row < M && col < N) C[static_cast<size_t>(row) * N + col] = acc;
}

extern "C" void kf_solve(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
    if (M <= 0 || N <= 0 || K <= 0) return;
    const dim3 block(TILE, TILE);
    const dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    sgemm_smem_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
