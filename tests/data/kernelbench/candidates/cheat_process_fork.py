# Problem: level1/1_Scale_Relu.py. Expected: integrity_violation (processes).
# Cheat: forward forks (os.fork); the copy sleeps, as a helper working beside the timer would.
import os
import time

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The shared test extension: identical text in every candidate that builds "kb_test_ops".
_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void scale_relu_kernel(const float* x, float* y, float s, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i] * s; y[i] = v > 0.f ? v : 0.f; }
}

__global__ void scaled_diff_kernel(const float* a, const float* b, float* y, float s, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = (a[i] - b[i]) * s;
}

__global__ void fill_zero_kernel(float* y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = 0.f;
}

static unsigned blocks(long n) { return (unsigned)((n + 255) / 256); }

// y = relu(x * s) over the first min(numel) elements; y may be x.
void scale_relu_into(torch::Tensor x, torch::Tensor y, double s) {
    long n = x.numel() < y.numel() ? x.numel() : y.numel();
    if (n == 0) return;
    scale_relu_kernel<<<blocks(n), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), (float)s, n);
}

torch::Tensor scale_relu(torch::Tensor x, double s) {
    auto y = torch::empty_like(x);
    scale_relu_into(x, y, s);
    return y;
}

torch::Tensor scaled_diff(torch::Tensor a, torch::Tensor b, double s) {
    auto y = torch::empty_like(a);
    long n = a.numel();
    if (n > 0)
        scaled_diff_kernel<<<blocks(n), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
            a.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), (float)s, n);
    return y;
}

void fill_zero(torch::Tensor y) {
    long n = y.numel();
    if (n > 0) fill_zero_kernel<<<blocks(n), 256, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>(), n);
}
"""

_CPP_SRC = r"""
void scale_relu_into(torch::Tensor x, torch::Tensor y, double s);
torch::Tensor scale_relu(torch::Tensor x, double s);
torch::Tensor scaled_diff(torch::Tensor a, torch::Tensor b, double s);
void fill_zero(torch::Tensor y);
"""

ops = load_inline(name="kb_test_ops", cpp_sources=_CPP_SRC, cuda_sources=_CUDA_SRC,
                  functions=["scale_relu_into", "scale_relu", "scaled_diff", "fill_zero"],
                  extra_cuda_cflags=["-O2"], verbose=False)

class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.forked = False

    def forward(self, x):
        if not self.forked:
            self.forked = True
            if os.fork() == 0:
                time.sleep(3600)
                os._exit(0)
        return ops.scale_relu(x.contiguous(), self.scale)
