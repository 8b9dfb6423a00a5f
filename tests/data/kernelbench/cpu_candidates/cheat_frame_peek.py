# CPU testing mode (needs no compiler, so the CUDA test uses it too). Problem:
# level1/1_Scale_Relu.py. Expected: incorrect.
# Cheat: looks through its callers' frames for the reference's output (a local named ref,
# expected or reference holding a tensor of the input's shape) and returns it; finding none,
# it returns zeros. The reference's outputs must be out of its reach, so it gets zeros.
import sys

import torch
import torch.nn as nn

_NAMES = ("ref", "expected", "reference", "ref_out", "expected_out")


def _peek(shape):
    f = sys._getframe(2)
    while f is not None:
        for name in _NAMES:
            v = f.f_locals.get(name)
            for t in (v if isinstance(v, (list, tuple)) else [v]):
                if isinstance(t, torch.Tensor) and tuple(t.shape) == shape:
                    return t
        f = f.f_back
    return None


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        found = _peek(tuple(x.shape))
        return found if found is not None else torch.zeros_like(x)
