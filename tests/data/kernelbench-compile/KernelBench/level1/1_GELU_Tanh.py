# The bundled task tasks/level1/gelu (tanh-approximated GELU on 2^28 floats) written as a
# KernelBench-format problem, so that one kernel can be compiled and timed through both paths.
import torch
import torch.nn as nn

batch_size = 16384
dim = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.rand(batch_size, dim) * 8.0 - 4.0]


def get_init_inputs():
    return []
