"""A dense FP8 GEMM with fgemm: quantize, multiply, compare with the unquantized product.

    python examples/gemm.py      (on the GPU when torch sees one, else on the CPU)
"""

import torch

import fgemm

device = "cuda" if torch.cuda.is_available() else "cpu"
m, n, k = 128, 4096, 7168
x = torch.randn(m, k, device=device, dtype=torch.bfloat16)
weight = torch.randn(n, k, device=device, dtype=torch.bfloat16)

# Activations: one FP32 scale per 1x128 block. Weights: one per 128x128 block (quantized once, offline).
x_fp8, x_scales = fgemm.per_token_cast_to_fp8(x)
w_fp8, w_scales = fgemm.per_block_cast_to_fp8(weight)
# The MN-major, TMA-aligned layout of the activation scales is the one the GPU kernels read directly;
# a row-major x_scales is accepted too, at the cost of a small transpose per call.
x_scales = fgemm.get_mn_major_tma_aligned_tensor(x_scales)

y = torch.empty(m, n, device=device, dtype=torch.bfloat16)
fgemm.fp8_gemm_nt((x_fp8, x_scales), (w_fp8, w_scales), y)

exact = x.double() @ weight.double().T
print(f"{device}: y = x @ weight^T for {m}x{n}x{k}, calc_diff against the unquantized product "
      f"{fgemm.calc_diff(y, exact):.2e} (FP8 quantization error included)")
