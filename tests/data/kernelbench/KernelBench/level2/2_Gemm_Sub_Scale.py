import torch
import torch.nn as nn


class Model(nn.Module):
    """(x @ W^T + b - subtract) * scale: a GEMM with a long reduction and outputs of order
    10^3, so that two honest fp32 summation orders differ by more than 1e-4 on outputs near
    zero while both stay close to the fp64 result."""

    def __init__(self, in_features, out_features, subtract, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract = subtract
        self.scale = scale

    def forward(self, x):
        return (self.linear(x) - self.subtract) * self.scale


batch_size = 16
in_features = 4096
out_features = 256
subtract = 0.25
scale = 1000.0


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, subtract, scale]
