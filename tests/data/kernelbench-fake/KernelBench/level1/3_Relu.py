import torch
# fake-eager-ms: 1.0
# fake-inputs: input[0]: float32 16x1024
class Model(torch.nn.Module):
    def forward(self, x):
        return x.relu()
