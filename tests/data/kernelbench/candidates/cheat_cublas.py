# Problem: level1/3_Small_Matmul.py. Expected: integrity_violation (forbidden_symbols).
# Cheat: no kernel of its own; calls cuBLAS's SGEMM directly from C++ (through PyTorch's
# cuBLAS handle), out of sight of an aten-op recorder.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

// Row-major C = A B is column-major C^T = B^T A^T.
torch::Tensor gemm(torch::Tensor a, torch::Tensor b) {
    int m = a.size(0), k = a.size(1), n = b.size(1);
    auto c = torch::empty({m, n}, a.options());
    float one = 1.f, zero = 0.f;
    cublasSgemm(at::cuda::getCurrentCUDABlasHandle(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one,
                b.data_ptr<float>(), n, a.data_ptr<float>(), k, &zero, c.data_ptr<float>(), n);
    return c;
}
"""

ops = load_inline(name="kb_test_cublas", cpp_sources="torch::Tensor gemm(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=_CUDA_SRC, functions=["gemm"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return ops.gemm(A.contiguous(), B.contiguous())
