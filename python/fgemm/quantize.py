"""Quantization to FP8 E4M3 with DeepSeek-V3's fine-grained scales, and its inverse.

Activations get one FP32 scale per 1x128 block (per token, per 128 channels of K), weights one per 128x128
block; each scale is the block's largest magnitude divided by 448 (E4M3's largest finite value), with that
magnitude clamped below at 1e-4 so that all-zero blocks get a usable scale. Sizes that are not multiples of
128 are padded with zeros internally. These run as a few torch operations each; a single-pass GPU kernel
comes later.
"""

import torch

FP8_E4M3_MAX = 448.0
_AMAX_FLOOR = 1e-4
_BLOCK = 128


def _check_input(x, name: str, op: str) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"fgemm.{op}: argument '{name}' expected a torch.Tensor, got {type(x).__name__}")
    if x.dim() not in (2, 3) or not x.is_floating_point():
        raise ValueError(f"fgemm.{op}: argument '{name}' expected a floating-point tensor of 2 or 3 dimensions, "
                         f"got shape {list(x.shape)} of {x.dtype}")


def _pad_last_dims(x: torch.Tensor, rows_multiple: int) -> torch.Tensor:
    """x with its last dimension padded with zeros to a multiple of 128, its second last to rows_multiple."""
    rows, cols = x.shape[-2:]
    pad_cols = -cols % _BLOCK
    pad_rows = -rows % rows_multiple
    if pad_cols == 0 and pad_rows == 0:
        return x
    return torch.nn.functional.pad(x, (0, pad_cols, 0, pad_rows))


def per_token_cast_to_fp8(x: torch.Tensor):
    """x [M, K] (or [G, M, K]), any float dtype -> (x_fp8 [M, K] float8_e4m3fn, sfa [M, ceil(K/128)] float32),
    both contiguous, with x ~= x_fp8 * sfa repeated over each 1x128 block."""
    _check_input(x, "x", "per_token_cast_to_fp8")
    k = x.shape[-1]
    padded = _pad_last_dims(x.float(), 1)
    blocks = padded.unflatten(-1, (-1, _BLOCK))
    amax = blocks.abs().amax(dim=-1).clamp(min=_AMAX_FLOOR)
    x_fp8 = (blocks * (FP8_E4M3_MAX / amax).unsqueeze(-1)).to(torch.float8_e4m3fn)
    return x_fp8.flatten(-2)[..., :k].contiguous(), amax / FP8_E4M3_MAX


def per_block_cast_to_fp8(w: torch.Tensor):
    """w [N, K] (or [G, N, K]), any float dtype -> (w_fp8 [N, K] float8_e4m3fn, sfb [ceil(N/128), ceil(K/128)]
    float32), both contiguous, with w ~= w_fp8 * sfb repeated over each 128x128 block."""
    _check_input(w, "w", "per_block_cast_to_fp8")
    n, k = w.shape[-2:]
    padded = _pad_last_dims(w.float(), _BLOCK)
    blocks = padded.unflatten(-1, (-1, _BLOCK)).unflatten(-3, (-1, _BLOCK))  # [..., NB, 128, KB, 128]
    amax = blocks.abs().amax(dim=(-3, -1), keepdim=True).clamp(min=_AMAX_FLOOR)
    w_fp8 = (blocks * (FP8_E4M3_MAX / amax)).to(torch.float8_e4m3fn)
    w_fp8 = w_fp8.flatten(-2).flatten(-3, -2)[..., :n, :k].contiguous()
    return w_fp8, (amax / FP8_E4M3_MAX).squeeze(-1).squeeze(-2)


def per_token_dequantize(x_fp8: torch.Tensor, sf: torch.Tensor, dtype=torch.float32) -> torch.Tensor:
    """The inverse of per_token_cast_to_fp8: x_fp8 [..., M, K] times its 1x128 scales sf [..., M, ceil(K/128)]
    (any strides), in `dtype`."""
    k = x_fp8.shape[-1]
    blocks = _pad_last_dims(x_fp8.to(dtype), 1).unflatten(-1, (-1, _BLOCK))
    return (blocks * sf.to(dtype).unsqueeze(-1)).flatten(-2)[..., :k]


def per_block_dequantize(w_fp8: torch.Tensor, sf: torch.Tensor, dtype=torch.float32) -> torch.Tensor:
    """The inverse of per_block_cast_to_fp8: w_fp8 [..., N, K] times its 128x128 scales
    sf [..., ceil(N/128), ceil(K/128)], in `dtype`."""
    n, k = w_fp8.shape[-2:]
    blocks = _pad_last_dims(w_fp8.to(dtype), _BLOCK).unflatten(-1, (-1, _BLOCK)).unflatten(-3, (-1, _BLOCK))
    scales = sf.to(dtype).unsqueeze(-1).unsqueeze(-3)  # [..., NB, 1, KB, 1]
    return (blocks * scales).flatten(-2).flatten(-3, -2)[..., :n, :k]
