# Problem: level1/1_Scale_Relu.py. Expected: runtime_error with fatal true.
# The kernel writes through a null pointer: an illegal memory access, a sticky CUDA error
# after which the worker answers with fatal true and exits.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void null_write_kernel(float* y) { y[threadIdx.x] = 1.f; }

torch::Tensor null_write(torch::Tensor x) {
    null_write_kernel<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(nullptr);
    return torch::empty_like(x);
}
"""

ops = load_inline(name="kb_test_fault", cpp_sources="torch::Tensor null_write(torch::Tensor x);",
                  cuda_sources=_CUDA_SRC, functions=["null_write"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        return ops.null_write(x)
