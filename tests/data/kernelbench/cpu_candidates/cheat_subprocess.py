# CPU testing mode. Problem: level1/1_Scale_Relu.py. Expected: integrity_violation (forbidden_symbols).
# Cheat: its extension can start a process (popen), e.g. to have the work done elsewhere.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SRC = r"""
#include <torch/extension.h>
#include <cstdio>

torch::Tensor scale_relu_elsewhere(torch::Tensor x, double s) {
    FILE* p = popen("true", "r");
    if (p) pclose(p);
    return torch::relu(x * s);
}
"""

ops = load_inline(name="kb_cpu_test_subprocess", cpp_sources=_CPP_SRC, functions=["scale_relu_elsewhere"],
                  verbose=False)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return ops.scale_relu_elsewhere(x, self.scale)
