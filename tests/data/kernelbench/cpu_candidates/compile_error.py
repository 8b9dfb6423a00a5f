# CPU testing mode. Problem: level1/1_Scale_Relu.py. Expected: compile_error.
# The C++ source misses a semicolon, so the load_inline build fails.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SRC = r"""
#include <torch/extension.h>

torch::Tensor broken(torch::Tensor x) {
    auto y = torch::empty_like(x)
    return y;
}
"""

ops = load_inline(name="kb_cpu_test_broken", cpp_sources=_CPP_SRC, functions=["broken"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        return ops.broken(x)
