# ModelNew for level1/1_GELU_Tanh: the kernels of tasks/level1/gelu/candidates/fast.cu, unchanged
# (tunable annotations included), behind a PyTorch wrapper compiled with load_inline.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>

// Vectorized GELU: float4 loads/stores in a grid-stride loop sized to fill the GPU, a scalar
// loop for the tail (and for buffers that are not 16-byte aligned).

#define BLOCK 256          // @kf tunable values(128, 256, 512, 1024)
#define BLOCKS_PER_SM 8    // @kf tunable values(2, 4, 8, 16)
#define UNROLL 2           // @kf tunable values(1, 2, 4)
// @kf constraint BLOCK * BLOCKS_PER_SM <= 2048

__device__ __forceinline__ float gelu_tanh(float v) {
    const float k0 = 0.7978845608028654f;  // sqrt(2 / pi)
    const float k1 = 0.044715f;
    float u = k0 * fmaf(k1 * v, v * v, v);
    return 0.5f * v * (1.0f + tanhf(u));
}

__device__ __forceinline__ float4 gelu4(float4 a) {
    return make_float4(gelu_tanh(a.x), gelu_tanh(a.y), gelu_tanh(a.z), gelu_tanh(a.w));
}

__global__ void __launch_bounds__(BLOCK) gelu_vec_kernel(const float4* __restrict__ x, float4* __restrict__ y,
                                                         size_t n4) {
    const size_t stride = static_cast<size_t>(gridDim.x) * BLOCK;
    size_t i = static_cast<size_t>(blockIdx.x) * BLOCK + threadIdx.x;
    // Main loop: UNROLL independent float4 loads in flight per thread.
    for (; i + (UNROLL - 1) * stride < n4; i += UNROLL * stride) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = __ldg(x + i + u * stride);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) y[i + u * stride] = gelu4(v[u]);
    }
    for (; i < n4; i += stride) y[i] = gelu4(__ldg(x + i));
}

__global__ void __launch_bounds__(BLOCK) gelu_scalar_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                            size_t begin, size_t n) {
    const size_t stride = static_cast<size_t>(gridDim.x) * BLOCK;
    for (size_t i = begin + static_cast<size_t>(blockIdx.x) * BLOCK + threadIdx.x; i < n; i += stride)
        y[i] = gelu_tanh(__ldg(x + i));
}

static int sm_count() {
    static int count = 0;
    if (count == 0) {
        int dev = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, dev);
        if (count <= 0) count = 132;
    }
    return count;
}

torch::Tensor gelu_forward(torch::Tensor x_in) {
    TORCH_CHECK(x_in.is_cuda() && x_in.scalar_type() == torch::kFloat32, "x must be a float32 CUDA tensor");
    torch::Tensor x = x_in.contiguous();
    torch::Tensor out = torch::empty_like(x);
    const float* xp = x.data_ptr<float>();
    float* yp = out.data_ptr<float>();
    const size_t count = static_cast<size_t>(x.numel());
    if (count == 0) return out;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const size_t max_blocks = static_cast<size_t>(sm_count()) * BLOCKS_PER_SM;
    const bool aligned = (reinterpret_cast<uintptr_t>(xp) % 16 == 0) && (reinterpret_cast<uintptr_t>(yp) % 16 == 0);
    size_t done = 0;
    if (aligned) {
        const size_t n4 = count / 4;
        if (n4 > 0) {
            size_t blocks = (n4 + BLOCK - 1) / BLOCK;
            if (blocks > max_blocks) blocks = max_blocks;
            gelu_vec_kernel<<<static_cast<unsigned>(blocks), BLOCK, 0, stream>>>(
                reinterpret_cast<const float4*>(xp), reinterpret_cast<float4*>(yp), n4);
        }
        done = n4 * 4;
    }
    if (done < count) {
        size_t blocks = (count - done + BLOCK - 1) / BLOCK;
        if (blocks > max_blocks) blocks = max_blocks;
        gelu_scalar_kernel<<<static_cast<unsigned>(blocks), BLOCK, 0, stream>>>(xp, yp, done, count);
    }
    return out;
}
"""

cpp_source = "torch::Tensor gelu_forward(torch::Tensor x_in);"

gelu_ext = load_inline(
    name="kf_gelu_fast",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["gelu_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return gelu_ext.gelu_forward(x)
