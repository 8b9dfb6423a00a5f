#include "kf_task.h"

#include <cstdint>

// Tiled fp32 SGEMM (no tensor cores): each block computes a BM x BN tile of C, each of its
// (BM/8) x (BN/8) threads an 8 x 8 sub-tile held in registers, laid out as 2 x 2 groups of
// 4 x 4 (rows ty*4 and ty*4 + BM/2, columns tx*4 and tx*4 + BN/2) so that shared-memory
// reads are float4 and conflict free. K is walked in steps of BK through double-buffered
// shared memory; the next tile's global loads are issued before the current tile's math.
// A is stored transposed in shared memory (k-major). float4 global loads/stores when
// K % 4 == 0, N % 4 == 0 and the buffers are 16-byte aligned; otherwise a scalar path with
// per-element bounds checks. Partial tiles are zero-filled, so any M, N, K work.

#define BM 128  // @kf tunable values(64, 128)
#define BN 128  // @kf tunable values(64, 128)
#define BK 8    // @kf tunable values(8, 16)
// 128 x 128 tiles with BK = 16 spill at 2 blocks per SM, so that combination is excluded:
// @kf constraint BM * BN < 16384 || BK == 8

#define THREADS ((BM / 8) * (BN / 8))
#define APAD 4
#define A_LOADS (BM * BK / 4 / THREADS)  // float4 groups of A per thread per tile
#define B_LOADS (BK * BN / 4 / THREADS)  // float4 groups of B per thread per tile

static_assert(A_LOADS >= 1 && A_LOADS * THREADS * 4 == BM * BK, "A tile load mapping");
static_assert(B_LOADS >= 1 && B_LOADS * THREADS * 4 == BK * BN, "B tile load mapping");

template <bool VEC>
__global__ void __launch_bounds__(THREADS, 2) sgemm_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                                                 float* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(16) float As[2][BK][BM + APAD];
    __shared__ __align__(16) float Bs[2][BK][BN];

    const int tid = threadIdx.x;
    const int tx = tid % (BN / 8);
    const int ty = tid / (BN / 8);
    const int bm = blockIdx.y * BM;
    const int bn = blockIdx.x * BN;

    float4 a_stage[A_LOADS];
    float4 b_stage[B_LOADS];

    auto load_tile = [&](int k0) {
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            const int i = tid + l * THREADS;
            const int row = i / (BK / 4);
            const int kq = (i % (BK / 4)) * 4;
            const int gm = bm + row, gk = k0 + kq;
            const float* src = A + static_cast<size_t>(gm) * K + gk;
            if (VEC) {
                a_stage[l] = (gm < M && gk < K) ? __ldg(reinterpret_cast<const float4*>(src))
                                                : make_float4(0.f, 0.f, 0.f, 0.f);
            } else {
                const bool rok = gm < M;
                a_stage[l].x = (rok && gk + 0 < K) ? __ldg(src + 0) : 0.f;
                a_stage[l].y = (rok && gk + 1 < K) ? __ldg(src + 1) : 0.f;
                a_stage[l].z = (rok && gk + 2 < K) ? __ldg(src + 2) : 0.f;
                a_stage[l].w = (rok && gk + 3 < K) ? __ldg(src + 3) : 0.f;
            }
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            const int i = tid + l * THREADS;
            const int row = i / (BN / 4);
            const int nq = (i % (BN / 4)) * 4;
            const int gk = k0 + row, gn = bn + nq;
            const float* src = B + static_cast<size_t>(gk) * N + gn;
            if (VEC) {
                b_stage[l] = (gk < K && gn < N) ? __ldg(reinterpret_cast<const float4*>(src))
                                                : make_float4(0.f, 0.f, 0.f, 0.f);
            } else {
                const bool kok = gk < K;
                b_stage[l].x = (kok && gn + 0 < N) ? __ldg(src + 0) : 0.f;
                b_stage[l].y = (kok && gn + 1 < N) ? __ldg(src + 1) : 0.f;
                b_stage[l].z = (kok && gn + 2 < N) ? __ldg(src + 2) : 0.f;
                b_stage[l].w = (kok && gn + 3 < N) ? __ldg(src + 3) : 0.f;
            }
        }
    };

    auto store_tile = [&](int buf) {
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            const int i = tid + l * THREADS;
            const int row = i / (BK / 4);
            const int kq = (i % (BK / 4)) * 4;
            As[buf][kq + 0][row] = a_stage[l].x;
            As[buf][kq + 1][row] = a_stage[l].y;
            As[buf][kq + 2][row] = a_stage[l].z;
            As[buf][kq + 3][row] = a_stage[l].w;
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            const int i = tid + l * THREADS;
            const int row = i / (BN / 4);
            const int nq = (i % (BN / 4)) * 4;
            *reinterpret_cast<float4*>(&Bs[buf][row][nq]) = b_stage[l];
        }
    };

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

    const int tiles = (K + BK - 1) / BK;
    load_tile(0);
    store_tile(0);
    __syncthreads();

    for (int t = 0; t < tiles; ++t) {
        const int buf = t & 1;
        if (t + 1 < tiles) load_tile((t + 1) * BK);

#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[8], b[8];
            const float4 a0 = *reinterpret_cast<const float4*>(&As[buf][k][ty * 4]);
            const float4 a1 = *reinterpret_cast<const float4*>(&As[buf][k][ty * 4 + BM / 2]);
            const float4 b0 = *reinterpret_cast<const float4*>(&Bs[buf][k][tx * 4]);
            const float4 b1 = *reinterpret_cast<const float4*>(&Bs[buf][k][tx * 4 + BN / 2]);
            a[0] = a0.x; a[1] = a0.y; a[2] = a0.z; a[3] = a0.w;
            a[4] = a1.x; a[5] = a1.y; a[6] = a1.z; a[7] = a1.w;
            b[0] = b0.x; b[1] = b0.y; b[2] = b0.z; b[3] = b0.w;
            b[4] = b1.x; b[5] = b1.y; b[6] = b1.z; b[7] = b1.w;
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }

        if (t + 1 < tiles) store_tile(buf ^ 1);
        __syncthreads();
    }

    // Write the 8 x 8 sub-tile: rows ty*4 + {0..3} (+ BM/2), columns tx*4 + {0..3} (+ BN/2).
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int gm = bm + ty * 4 + (i & 3) + (i >= 4 ? BM / 2 : 0);
        if (gm >= M) continue;
        float* crow = C + static_cast<size_t>(gm) * N;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int gn = bn + tx * 4 + h * (BN / 2);
            if (VEC) {
                if (gn < N)
                    *reinterpret_cast<float4*>(crow + gn) =
                        make_float4(acc[i][h * 4 + 0], acc[i][h * 4 + 1], acc[i][h * 4 + 2], acc[i][h * 4 + 3]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (gn + j < N) crow[gn + j] = acc[i][h * 4 + j];
            }
        }
    }
}

extern "C" void kf_solve(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
    if (M <= 0 || N <= 0 || K <= 0) return;
    const bool vec = (K % 4 == 0) && (N % 4 == 0) && (reinterpret_cast<uintptr_t>(A) % 16 == 0) &&
                     (reinterpret_cast<uintptr_t>(B) % 16 == 0) && (reinterpret_cast<uintptr_t>(C) % 16 == 0);
    const dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    if (vec) sgemm_tiled_kernel<true><<<grid, THREADS, 0, stream>>>(A, B, C, M, N, K);
    else sgemm_tiled_kernel<false><<<grid, THREADS, 0, stream>>>(A, B, C, M, N, K);
}
