import torch
# fake-eager-ms: 3.0
# fake-compile-ms: error
class Model(torch.nn.Module):
    def forward(self, x):
        return x.sum(1)
