import torch
import torch.nn as nn


class Model(nn.Module):
    """Inclusive prefix sum along dimension 1 of a 32768 x 32768 matrix."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x, dim=self.dim)


batch_size = 32768
dim = 32768
scan_dim = 1


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return [scan_dim]
