#include "kf_task.h"

// GEMM + bias + ReLU with 1-D register blocking ("thread coarsening"): a block of BM * BN / TM
// threads computes a BM x BN tile of C; each thread owns TM consecutive rows of one column, so
// every B value read from shared memory is reused TM times from a register. K is walked in
// steps of BK through shared memory (A tile stored k-major so the TM reads of a thread are
// contiguous). Tile loads are generic strided loops with zero fill, so any M, N, K and any
// tunable combination work. Sits between the one-output-per-thread tiled kernel and full 2-D
// register blocking: fewer registers, so it can win on small or skinny problems. Epilogue: each
// thread loads bias[n] for its column once and stores max(0, acc + bias[n]).

#define BM 64  // @kf tunable values(32, 64, 128)
#define BN 64  // @kf tunable values(32, 64, 128)
#define BK 8   // @kf tunable values(8, 16, 32)
#define TM 8   // @kf tunable values(4, 8, 16)
// @kf constraint BM % TM == 0
// @kf constraint BM * BN / TM >= 64 && BM * BN / TM <= 1024

#define THREADS (BM * BN / TM)

__global__ void __launch_bounds__(THREADS) sgemm_bias_relu_1d_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                                           const float* __restrict__ bias, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[BK][BM];  // k-major
    __shared__ float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int tcol = tid % BN;          // column inside the tile
    const int trow = (tid / BN) * TM;   // first of TM rows inside the tile
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;

    float acc[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i) acc[i] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = tid; i < BM * BK; i += THREADS) {
            const int r = i / BK, k = i % BK;  // consecutive threads walk k: coalesced A rows
            const int gm = bm + r, gk = k0 + k;
            As[k][r] = (gm < M && gk < K) ? __ldg(A + static_cast<size_t>(gm) * K + gk) : 0.0f;
        }
        for (int i = tid; i < BK * BN; i += THREADS) {
            const int k = i / BN, c = i % BN;
            const int gk = k0 + k, gn = bn + c;
            Bs[k][c] = (gk < K && gn < N) ? __ldg(B + static_cast<size_t>(gk) * N + gn) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float b = Bs[k][tcol];
#pragma unroll
            for (int i = 0; i < TM; ++i) acc[i] = fmaf(As[k][trow + i], b, acc[i]);
        }
        __syncthreads();
    }

    const int gn = bn + tcol;
    if (gn < N) {
        const float bv = __ldg(bias + gn);
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int gm = bm + trow + i;
            if (gm < M) C[static_cast<size_t>(gm) * N + gn] = fmaxf(acc[i] + bv, 0.0f);
        }
    }
}

extern "C" void kf_solve(const float* A, const float* B, const float* bias, float* C, int M, int N, int K,
                         cudaStream_t stream) {
    if (M <= 0 || N <= 0 || K <= 0) return;
    const dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    sgemm_bias_relu_1d_kernel<<<grid, THREADS, 0, stream>>>(A, B, bias, C, M, N, K);
}
