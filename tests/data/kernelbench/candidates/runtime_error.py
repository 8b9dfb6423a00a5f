# Problem: level1/1_Scale_Relu.py. Expected: runtime_error.
# forward raises (a shape bug of the kind generated code has); no device code needed.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        raise RuntimeError("expected a 3-d input, got %d dimensions" % x.dim())
