# Problem: level2/2_Gemm_Sub_Scale.py. Expected: ok.
# Honest reordering: the reduction summed backwards in two halves.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The shared extension of the reordered-GEMM candidates: identical text in every candidate
# that builds "kb_test_reorder_ops" (one thread per output, fp32 unless named otherwise).
_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_bf16.h>

__global__ void gemm_kernel(const float* x, const float* w, const float* b, float* y, int m, int k, int n,
                            float subtract, float scale, int mode) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (i >= m || j >= n) return;
    const float* xr = x + (long)i * k;
    const float* wr = w + (long)j * k;
    if (mode == 1) {  // backwards, in two halves, epilogue as written
        float hi = 0.f, lo = 0.f;
        for (int p = k - 1; p >= k / 2; --p) hi += xr[p] * wr[p];
        for (int p = k / 2 - 1; p >= 0; --p) lo += xr[p] * wr[p];
        y[(long)i * n + j] = ((hi + lo) + b[j] - subtract) * scale;
        return;
    }
    float acc = 0.f;
    for (int p = 0; p < k; ++p) {
        float a = xr[p], c = wr[p] * scale;
        if (mode == 2) {  // operands truncated to bfloat16
            a = __bfloat162float(__float2bfloat16_rz(a));
            c = __bfloat162float(__float2bfloat16_rz(c));
        }
        acc += a * c;
    }
    y[(long)i * n + j] = acc + (b[j] - subtract) * scale;
}

torch::Tensor gemm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double subtract, double scale, int64_t mode) {
    int m = x.size(0), k = x.size(1), n = w.size(0);
    auto y = torch::empty({m, n}, x.options());
    dim3 grid((n + 127) / 128, m);
    gemm_kernel<<<grid, 128, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), w.data_ptr<float>(),
        b.data_ptr<float>(), y.data_ptr<float>(), m, k, n, (float)subtract, (float)scale, (int)mode);
    return y;
}
"""
_CPP_SRC = "torch::Tensor gemm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double subtract, double scale, int64_t mode);"

ops = load_inline(name="kb_test_reorder_ops", cpp_sources=_CPP_SRC, cuda_sources=_CUDA_SRC, functions=["gemm"],
                  extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, subtract, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract = subtract
        self.scale = scale

    def forward(self, x):
        return ops.gemm(x.contiguous(), self.linear.weight.contiguous(), self.linear.bias, self.subtract, self.scale,
                        1)
