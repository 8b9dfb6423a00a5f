# Problem: level1/1_Scale_Relu.py. Expected: load_error.
# Imports a module that does not exist.
import torch
import torch.nn as nn
import kb_no_such_module_for_tests  # noqa: F401


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        return x
