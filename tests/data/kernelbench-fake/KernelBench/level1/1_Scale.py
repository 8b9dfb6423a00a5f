import torch
# fake-eager-ms: 2.0
# fake-compile-ms: 1.0
class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2
