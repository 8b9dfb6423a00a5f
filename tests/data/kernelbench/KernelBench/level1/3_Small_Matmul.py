import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B for A of M x K and B of K x N (no batch dimension)."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


M = 128
K = 256
N = 192


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
