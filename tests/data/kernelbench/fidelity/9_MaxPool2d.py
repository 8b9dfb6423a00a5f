import torch
import torch.nn as nn


class Model(nn.Module):
    """2x2 max pooling with stride 2 over 64 x 64 x 512 x 512."""

    def __init__(self, kernel_size, stride):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride)

    def forward(self, x):
        return self.pool(x)


batch_size = 64
channels = 64
height = 512
width = 512
kernel_size = 2
stride = 2


def get_inputs():
    return [torch.rand(batch_size, channels, height, width)]


def get_init_inputs():
    return [kernel_size, stride]
