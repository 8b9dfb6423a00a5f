import torch
import torch.nn as nn


class Model(nn.Module):
    """y = (a - b) * scale with a tiny scale: every output is below 1e-4 in magnitude, so an
    absolute tolerance of 1e-4 alone would accept all zeros."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, a, b):
        return (a - b) * self.scale


batch_size = 16
dim = 4096
scale = 1e-5


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return [scale]
