#include "kf_task.h"

#include <cstdint>

// Faster row softmax, one block per row.
//  * Register path (cols % 4 == 0, 16-byte aligned, cols <= BLOCK * 4 * ITEMS): the row is
//    read once with float4 loads into registers, block max, exponentials, block sum, one
//    normalised float4 write: exactly one read and one write of the data.
//  * General path (any cols): one pass with an online (max, sum) per thread, merged across
//    the block, then a second pass that re-reads x and writes y.
// Block reductions use warp shuffles and a shared array of per-warp partials.

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

// Result broadcast to every thread of the block. `scratch` must hold NWARPS floats.
__device__ __forceinline__ float block_max(float v, float* scratch) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    v = warp_max(v);
    __syncthreads();  // scratch may still be read by a previous reduction
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

__global__ void __launch_bounds__(BLOCK) softmax_registers_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                                  int cols) {
    __shared__ float scratch[NWARPS];
    const size_t base = static_cast<size_t>(blockIdx.x) * cols;
    const float4* in = reinterpret_cast<const float4*>(x + base);
    float4* out = reinterpret_cast<float4*>(y + base);
    const int n4 = cols / 4;

    float4 v[ITEMS];
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int i = threadIdx.x + k * BLOCK;
        v[k] = i < n4 ? __ldg(in + i) : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
        m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
    }
    m = block_max(m, scratch);

    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        v[k].x = __expf(v[k].x - m);
        v[k].y = __expf(v[k].y - m);
        v[k].z = __expf(v[k].z - m);
        v[k].w = __expf(v[k].w - m);
        s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    }
    s = block_sum(s, scratch);
    const float inv = 1.0f / s;

#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int i = threadIdx.x + k * BLOCK;
        if (i < n4) out[i] = make_float4(v[k].x * inv, v[k].y * inv, v[k].z * inv, v[k].w * inv);
    }
}

// Online softmax state: running max m and sum s of exp(x - m).
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

template <bool VEC>
__global__ void __launch_bounds__(BLOCK) softmax_general_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                                int cols) {
    __shared__ float sm[NWARPS], ss[NWARPS];
    const size_t base = static_cast<size_t>(blockIdx.x) * cols;
    const float* row = x + base;
    float* out = y + base;
    const int n4 = VEC ? cols / 4 : 0;

    float m = -INFINITY, s = 0.0f;
    if (VEC) {
        const float4* row4 = reinterpret_cast<const float4*>(row);
        for (int i = threadIdx.x; i < n4; i += BLOCK) {
            const float4 v = __ldg(row4 + i);
            online_add(m, s, v.x);
            online_add(m, s, v.y);
            online_add(m, s, v.z);
            online_add(m, s, v.w);
        }
    }
    for (int c = n4 * 4 + threadIdx.x; c < cols; c += BLOCK) online_add(m, s, __ldg(row + c));

    // Merge across the warp, then across warps.
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
    const float inv = 1.0f / s;

    if (VEC) {
        const float4* row4 = reinterpret_cast<const float4*>(row);
        float4* out4 = reinterpret_cast<float4*>(out);
        for (int i = threadIdx.x; i < n4; i += BLOCK) {
            const float4 v = __ldg(row4 + i);
            out4[i] = make_float4(__expf(v.x - m) * inv, __expf(v.y - m) * inv, __expf(v.z - m) * inv,
                                  __expf(v.w - m) * inv);
        }
    }
    for (int c = n4 * 4 + threadIdx.x; c < cols; c += BLOCK) out[c] = __expf(__ldg(row + c) - m) * inv;
}

extern "C" void kf_solve(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;
    const bool vec = (cols % 4 == 0) && (reinterpret_cast<uintptr_t>(x) % 16 == 0) &&
                     (reinterpret_cast<uintptr_t>(y) % 16 == 0);
    if (vec && cols <= BLOCK * 4 * ITEMS)
        softmax_registers_kernel<<<rows, BLOCK, 0, stream>>>(x, y, cols);
    else if (vec)
        softmax_general_kernel<true><<<rows, BLOCK, 0, stream>>>(x, y, cols);
    else
        softmax_general_kernel<false><<<rows, BLOCK, 0, stream>>>(x, y, cols);
}
