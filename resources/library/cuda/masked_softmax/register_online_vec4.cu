#include "kf_task.h"

#include <cstdint>

// Faster scaled, masked row softmax, one block per row.
//  * Register path (cols % 4 == 0, x/y 16-byte and mask 4-byte aligned, cols <= BLOCK*4*ITEMS):
//    x is read once as float4 and the mask as 4 bytes at a time into registers; block max over
//    the kept scores, exponentials, block sum, one float4 write.
//  * General path (any cols): an online (max, sum) per thread over the kept scores, merged
//    across the block, then a second pass that re-reads x and the mask and writes y.
// A row with no kept column (block max == -inf) is written as zeros.

#define BLOCK 256   // @kf tunable values(128, 256, 512, 1024)
#define ITEMS 8     // @kf tunable values(4, 8, 16)
// @kf constraint BLOCK * ITEMS <= 8192

#define NWARPS (BLOCK / 32)

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

__device__ __forceinline__ float block_max(float v, float* scratch) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < NWARPS ? scratch[lane] : -INFINITY;
    return warp_max(v);
}

__device__ __forceinline__ float block_sum(float v, float* scratch) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < NWARPS ? scratch[lane] : 0.0f;
    return warp_sum(v);
}

__global__ void __launch_bounds__(BLOCK) masked_softmax_registers_kernel(const float* __restrict__ x,
                                                                         const bool* __restrict__ mask,
                                                                         float* __restrict__ y, int cols,
                                                                         float scale) {
    __shared__ float scratch[NWARPS];
    const size_t base = static_cast<size_t>(blockIdx.x) * cols;
    const float4* in = reinterpret_cast<const float4*>(x + base);
    const uchar4* keep = reinterpret_cast<const uchar4*>(mask + base);
    float4* out = reinterpret_cast<float4*>(y + base);
    const int n4 = cols / 4;

    float4 v[ITEMS];
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int i = threadIdx.x + k * BLOCK;
        float4 s = make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
        if (i < n4) {
            const float4 a = __ldg(in + i);
            const uchar4 b = __ldg(keep + i);
            s.x = b.x ? scale * a.x : -INFINITY;
            s.y = b.y ? scale * a.y : -INFINITY;
            s.z = b.z ? scale * a.z : -INFINITY;
            s.w = b.w ? scale * a.w : -INFINITY;
        }
        v[k] = s;
        m = fmaxf(m, fmaxf(fmaxf(s.x, s.y), fmaxf(s.z, s.w)));
    }
    m = block_max(m, scratch);

    if (m == -INFINITY) {  // no kept column in this row
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int i = threadIdx.x + k * BLOCK;
            if (i < n4) out[i] = make_float4(0.f, 0.f, 0.f, 0.f);
        }
        return;
    }

    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        v[k].x = __expf(v[k].x - m);  // masked: exp(-inf) = 0
        v[k].y = __expf(v[k].y - m);
        v[k].z = __expf(v[k].z - m);
        v[k].w = __expf(v[k].w - m);
        sum += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    }
    sum = block_sum(sum, scratch);
    const float inv = 1.0f / sum;

#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int i = threadIdx.x + k * BLOCK;
        if (i < n4) out[i] = make_float4(v[k].x * inv, v[k].y * inv, v[k].z * inv, v[k].w * inv);
    }
}

__device__ __forceinline__ void online_add(float& m, float& s, float v) {
    if (v > m) {
        s = s * __expf(m - v) + 1.0f;  // m == -inf gives s * 0 + 1
        m = v;
    } else {
        s += __expf(v - m);
    }
}

__device__ __forceinline__ void online_merge(float& m, float& s, float m2, float s2) {
    const float mm = fmaxf(m, m2);
    if (mm == -INFINITY) return;  // both empty
    s = s * __expf(m - mm) + s2 * __expf(m2 - mm);
    m = mm;
}

__global__ void __launch_bounds__(BLOCK) masked_softmax_general_kernel(const float* __restrict__ x,
                                                                       const bool* __restrict__ mask,
                                                                       float* __restrict__ y, int cols,
                                                                       float scale) {
    __shared__ float sm[NWARPS], ss[NWARPS];
    const size_t base = static_cast<size_t>(blockIdx.x) * cols;
    const float* row = x + base;
    const bool* keep = mask + base;
    float* out = y + base;

    float m = -INFINITY, s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        if (keep[c]) online_add(m, s, scale * __ldg(row + c));

#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
        const float s2 = __shfl_xor_sync(0xffffffffu, s, off);
        online_merge(m, s, m2, s2);
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) {
        sm[warp] = m;
        ss[warp] = s;
    }
    __syncthreads();
    m = -INFINITY;
    s = 0.0f;
    for (int w = 0; w < NWARPS; ++w) online_merge(m, s, sm[w], ss[w]);

    if (m == -INFINITY) {
        for (int c = threadIdx.x; c < cols; c += BLOCK) out[c] = 0.0f;
        return;
    }
    const float inv = 1.0f / s;
    for (int c = threadIdx.x; c < cols; c += BLOCK)
        out[c] = keep[c] ? __expf(scale * __ldg(row + c) - m) * inv : 0.0f;
}

extern "C" void kf_solve(const float* x, const bool* mask, float* y, int rows, int cols, float scale,
                         cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const bool vec = (cols % 4 == 0) && (reinterpret_cast<uintptr_t>(x) % 16 == 0) &&
                     (reinterpret_cast<uintptr_t>(y) % 16 == 0) && (reinterpret_cast<uintptr_t>(mask) % 4 == 0);
    if (vec && cols <= BLOCK * 4 * ITEMS)
        masked_softmax_registers_kernel<<<rows, BLOCK, 0, stream>>>(x, mask, y, cols, scale);
    else
        masked_softmax_general_kernel<<<rows, BLOCK, 0, stream>>>(x, mask, y, cols, scale);
}
