"""The layers' quantizers: each activation and each output gradient is quantized twice, per 1x128 block along its
rows for the GEMM that reads it as A, and transposed, per 1x128 block along its tokens, for the weight gradient
that reads it with the tokens as K.

Written with the existing quantizers for now (a transposed copy, then per_token_cast_to_fp8). A fused
cast-transpose kernel with these signatures and the same bits is to replace them: it is a change to this file
alone.
"""

from typing import List, Tuple

import torch

from ..quantize import per_token_cast_to_fp8

CastTransposed = Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]


def cast_transpose_to_fp8(x: torch.Tensor) -> CastTransposed:
    """x [M, K] -> (x_fp8 [M, K], sf [M, ceil(K/128)], xt_fp8 [K, M], sft [K, ceil(M/128)]): the codes and 1x128
    scales of x (per_token_cast_to_fp8(x)) and of its transpose (per_token_cast_to_fp8(x.t().contiguous()))."""
    x_fp8, sf = per_token_cast_to_fp8(x)
    xt_fp8, sft = per_token_cast_to_fp8(x.t().contiguous())
    return x_fp8, sf, xt_fp8, sft


def grouped_cast_transpose_to_fp8(x: torch.Tensor, ks: List[int]) -> CastTransposed:
    """x [sum(ks), H], expert g's ks[g] rows after the experts before it (each ks[g] a multiple of 128, 0 allowed)
    -> (x_fp8 [sum(ks), H], sf [sum(ks), ceil(H/128)], xt_flat, sft [H, sum(ks)/128]).

    x_fp8 and sf are per_token_cast_to_fp8(x). xt_flat is 1-D [sum(ks) * H]: expert g's transpose [H, ks[g]],
    row-major, from element s_g * H (s_g = the rows of the experts before g), the operand layout of
    k_grouped_fp8_gemm_nt_contiguous; sft its 1x128 scales, the experts' blocks of columns one after another.
    Since every ks[g] is a multiple of 128, these are the bits of per_token_cast_to_fp8(x.t().contiguous())
    with its columns regrouped by expert."""
    x_fp8, sf = per_token_cast_to_fp8(x)
    transposed = [per_token_cast_to_fp8(rows.t().contiguous()) for rows in x.split(ks)]
    xt_flat = torch.cat([codes.flatten() for codes, _ in transposed])
    sft = torch.cat([scales for _, scales in transposed], dim=1)
    return x_fp8, sf, xt_flat, sft
