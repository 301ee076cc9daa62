"""What fgemm is measured against: the same operations written with torch."""

import torch

BLOCK = 128


def cublaslt_blockwise(a, sfa, b, sfb):
    """torch._scaled_mm (cuBLASLt) with 1x128 activation scales (outer-dim-major) and 128x128 weight scales."""
    scale_a = sfa.t().contiguous().t()  # [M, K/128], M contiguous
    scale_b = sfb.t()  # [K/128, N/128]
    return lambda: torch._scaled_mm(a, b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)


def cublaslt_per_expert(a, sfa, b, sfb):
    """cuBLASLt block-wise called once per expert of [G, m, K] x [G, N, K]^T, as a user would otherwise write a
    grouped GEMM."""
    per_expert = [cublaslt_blockwise(a[g], sfa[g], b[g], sfb[g]) for g in range(a.shape[0])]
    return lambda: [run() for run in per_expert]


def dequantize(x_fp8, scales, rows_per_scale, dtype):
    """x_fp8 [..., rows, K] (K a multiple of 128) times its scales [..., ceil(rows / rows_per_scale), K / 128],
    one per rows_per_scale x 128 block, in `dtype`: two passes of torch operations (the conversion, then the
    product)."""
    rows, k = x_fp8.shape[-2:]
    if k % BLOCK:
        raise ValueError(f"K = {k}: the baseline's dequantisation takes K a multiple of {BLOCK}")
    row_scales = scales.to(dtype).repeat_interleave(rows_per_scale, dim=-2)[..., :rows, :]
    return (x_fp8.to(dtype).unflatten(-1, (k // BLOCK, BLOCK)) * row_scales.unsqueeze(-1)).flatten(-2)


def dequantized_matmul(a, sfa, b, sfb, dtype):
    """A B^T from the dequantised operands (A per 1x128, B per 128x128; leading group dimensions batch), the
    dequantisation and the product in `dtype`."""
    return dequantize(a, sfa, 1, dtype) @ dequantize(b, sfb, BLOCK, dtype).transpose(-1, -2)


def dequantize_matmul_bf16_out(dtype):
    """The CPU baseline of a GEMM computed in `dtype`: dequantise both operands, torch.matmul, D in BF16."""
    return lambda a, sfa, b, sfb: lambda: dequantized_matmul(a, sfa, b, sfb, dtype).to(torch.bfloat16)


def dequantize_int8_matmul_bf16_out(dtype):
    """The CPU baseline of a W8A8 GEMM (per-token scales sa [M], per-channel sb [N]) computed in `dtype`:
    dequantise both INT8 operands, torch.matmul, D in BF16."""
    def baseline(a, sa, b, sb):
        return lambda: ((a.to(dtype) * sa.to(dtype)[:, None]) @ (b.to(dtype) * sb.to(dtype)[:, None]).t()).to(
            torch.bfloat16)
    return baseline


def torch_per_token(x):
    """The torch-op chain of per_token_cast_to_fp8: one scale per 1x128 block."""
    k = x.shape[-1]
    blocks = torch.nn.functional.pad(x.float(), (0, -k % BLOCK)).unflatten(-1, (-1, BLOCK))
    amax = blocks.abs().amax(dim=-1, keepdim=True).clamp(min=1e-4)
    codes = (blocks * (448.0 / amax)).to(torch.float8_e4m3fn).flatten(-2)[..., :k].contiguous()
    return codes, (amax / 448.0).squeeze(-1)


def torch_per_block(w):
    """The torch-op chain of per_block_cast_to_fp8 (fgemm's implementation before its kernel)."""
    n, k = w.shape
    padded = torch.nn.functional.pad(w.float(), (0, -k % BLOCK, 0, -n % BLOCK))
    blocks = padded.unflatten(-1, (-1, BLOCK)).unflatten(-3, (-1, BLOCK))
    amax = blocks.abs().amax(dim=(-3, -1), keepdim=True).clamp(min=1e-4)
    codes = (blocks * (448.0 / amax)).to(torch.float8_e4m3fn).flatten(-2).flatten(-3, -2)[:n, :k].contiguous()
    return codes, (amax / 448.0).squeeze(-1).squeeze(-2)
