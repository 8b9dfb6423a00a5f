import torch
import torch.nn as nn


class Model(nn.Module):
    """y = relu(x * scale), elementwise."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.relu(x * self.scale)


batch_size = 16
dim = 4096
scale = 2.0


def get_inputs():
    # randn rather than rand, so that the ReLU has negatives to clamp
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [scale]
