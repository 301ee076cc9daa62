"""fgemm on unquantized inputs, and fgemm's ops under torch.compile.

    python examples/matmul.py      (on the GPU when fgemm supports it, else on the CPU)
"""

import logging

import numpy as np
import torch

import fgemm

logging.basicConfig(level=logging.INFO)  # shows the precision that precision="auto" picks
device = "cuda" if fgemm.is_supported() else "cpu"

# a @ b of plain matrices: quantized to FP8 by fgemm, multiplied by its GEMM, returned as given.
a = np.random.default_rng(0).standard_normal((64, 1000))
b = np.random.default_rng(1).standard_normal((1000, 300))
product = fgemm.matmul(a, b, device=device)  # a NumPy array, float64 like a and b
diff = fgemm.calc_diff(torch.from_numpy(product), torch.from_numpy(a @ b))
print(f"matmul of NumPy arrays on {device}: calc_diff against a @ b {diff:.1e}")


# A linear layer with FP8 weights, compiled whole: the quantizer and the GEMM are torch.ops.fgemm ops.
@torch.compile(fullgraph=True)
def linear(x, w_fp8, w_scales):
    y = torch.empty(x.shape[0], w_fp8.shape[0], dtype=torch.bfloat16, device=x.device)
    fgemm.fp8_gemm_nt(fgemm.per_token_cast_to_fp8(x, mn_major_scales=True), (w_fp8, w_scales), y)
    return y


x = torch.randn(16, 1024, device=device, dtype=torch.bfloat16)
weight = torch.randn(512, 1024, device=device, dtype=torch.bfloat16)
w_fp8, w_scales = fgemm.per_block_cast_to_fp8(weight)
y = linear(x, w_fp8, w_scales)
diff = fgemm.calc_diff(y, x.double() @ weight.double().T)
print(f"compiled linear on {device}: calc_diff against x @ weight^T {diff:.1e}")
