# Problem: level2/1_Linear_Relu.py. Expected: ok.
# Owns an nn.Linear created exactly as the problem's Model creates it (same seed, same order,
# hence the same weights) and fuses the product, bias and ReLU in one naive CUDA kernel.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

// y[r][c] = relu(sum_k x[r][k] * w[c][k] + b[c]); one thread per output.
__global__ void linear_relu_kernel(const float* x, const float* w, const float* b, float* y,
                                   int rows, int in, int out) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y;
    if (c >= out || r >= rows) return;
    float acc = b[c];
    for (int k = 0; k < in; ++k) acc += x[(long)r * in + k] * w[(long)c * in + k];
    y[(long)r * out + c] = acc > 0.f ? acc : 0.f;
}

torch::Tensor linear_relu(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    int rows = x.size(0), in = x.size(1), out = w.size(0);
    auto y = torch::empty({rows, out}, x.options());
    dim3 grid((out + 127) / 128, rows);
    linear_relu_kernel<<<grid, 128, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), rows, in, out);
    return y;
}
"""

ops = load_inline(name="kb_test_linear_relu",
                  cpp_sources="torch::Tensor linear_relu(torch::Tensor x, torch::Tensor w, torch::Tensor b);",
                  cuda_sources=_CUDA_SRC, functions=["linear_relu"], extra_cuda_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return ops.linear_relu(x.contiguous(), self.linear.weight, self.linear.bias)
