# Problem: level1/1_Scale_Relu.py. Expected: compile_error.
# The CUDA source misses a semicolon, so the load_inline build fails.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA_SRC = r"""
#include <torch/extension.h>

__global__ void broken_kernel(const float* x, float* y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i]
}

torch::Tensor broken(torch::Tensor x) {
    auto y = torch::empty_like(x);
    broken_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""

ops = load_inline(name="kb_test_broken", cpp_sources="torch::Tensor broken(torch::Tensor x);",
                  cuda_sources=_CUDA_SRC, functions=["broken"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return ops.broken(x)
