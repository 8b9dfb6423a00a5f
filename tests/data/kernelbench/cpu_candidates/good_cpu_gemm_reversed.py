# CPU testing mode. Problem: level2/2_Gemm_Sub_Scale.py. Expected: ok.
# Honest reordering: the reduction summed backwards in two halves, the epilogue as written.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The shared extension of the reordered-GEMM candidates: identical text in every candidate
# that builds "kb_cpu_reorder_ops" (plain C++ loops, fp32 throughout unless named otherwise).
_CPP_SRC = r"""
#include <torch/extension.h>
#include <cstring>

// y = x @ (W * scale)^T + (b - subtract) * scale: the scale folded into the weights, one
// fp32 sum per output, k ascending.
torch::Tensor gemm_folded(torch::Tensor x, torch::Tensor w, torch::Tensor b, double subtract, double scale) {
    long m = x.size(0), k = x.size(1), n = w.size(0);
    auto y = torch::empty({m, n}, x.options());
    const float* xp = x.data_ptr<float>();
    const float* wp = w.data_ptr<float>();
    const float* bp = b.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const float s = (float)scale;
    for (long i = 0; i < m; ++i)
        for (long j = 0; j < n; ++j) {
            float acc = 0.f;
            for (long p = 0; p < k; ++p) acc += xp[i * k + p] * (wp[j * k + p] * s);
            yp[i * n + j] = acc + (bp[j] - (float)subtract) * s;
        }
    return y;
}

// ((x @ W^T, k descending, in two halves) + b - subtract) * scale.
torch::Tensor gemm_reversed(torch::Tensor x, torch::Tensor w, torch::Tensor b, double subtract, double scale) {
    long m = x.size(0), k = x.size(1), n = w.size(0);
    auto y = torch::empty({m, n}, x.options());
    const float* xp = x.data_ptr<float>();
    const float* wp = w.data_ptr<float>();
    const float* bp = b.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    for (long i = 0; i < m; ++i)
        for (long j = 0; j < n; ++j) {
            float hi = 0.f, lo = 0.f;
            for (long p = k - 1; p >= k / 2; --p) hi += xp[i * k + p] * wp[j * k + p];
            for (long p = k / 2 - 1; p >= 0; --p) lo += xp[i * k + p] * wp[j * k + p];
            yp[i * n + j] = ((hi + lo) + bp[j] - (float)subtract) * (float)scale;
        }
    return y;
}

static inline float to_bf16(float v) {
    unsigned u;
    std::memcpy(&u, &v, 4);
    u &= 0xffff0000u;
    std::memcpy(&v, &u, 4);
    return v;
}

// The folded GEMM with x and W truncated to bfloat16: a precision downgrade.
torch::Tensor gemm_bf16(torch::Tensor x, torch::Tensor w, torch::Tensor b, double subtract, double scale) {
    long m = x.size(0), k = x.size(1), n = w.size(0);
    auto y = torch::empty({m, n}, x.options());
    const float* xp = x.data_ptr<float>();
    const float* wp = w.data_ptr<float>();
    const float* bp = b.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const float s = (float)scale;
    for (long i = 0; i < m; ++i)
        for (long j = 0; j < n; ++j) {
            float acc = 0.f;
            for (long p = 0; p < k; ++p) acc += to_bf16(xp[i * k + p]) * to_bf16(wp[j * k + p] * s);
            yp[i * n + j] = acc + (bp[j] - (float)subtract) * s;
        }
    return y;
}
"""

ops = load_inline(name="kb_cpu_reorder_ops", cpp_sources=_CPP_SRC,
                  functions=["gemm_folded", "gemm_reversed", "gemm_bf16"], extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, subtract, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract = subtract
        self.scale = scale

    def forward(self, x):
        return ops.gemm_reversed(x.contiguous(), self.linear.weight.contiguous(), self.linear.bias, self.subtract, self.scale)
