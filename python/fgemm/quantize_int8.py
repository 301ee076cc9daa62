"""Quantization to INT8 with FP32 scales, the operands of the INT8 GEMMs.

Activations get one scale per token (row) or per 1 x group_size block of a row, weights one per output channel
(row) or per 128x128 block. Each scale is the block's largest magnitude divided by 127, with that magnitude clamped
below at 1e-10 so that all-zero blocks get a usable scale; each code is the element times 127 over the magnitude,
rounded to the nearest integer (ties to even), from -127 to 127 (-128 never occurs). K and N need not be multiples
of the block: the last blocks are partial. CUDA tensors are quantized by one GPU kernel on the current torch
stream, CPU tensors by the CPU backend, with the same bits. The exact arithmetic, and what NaN and infinities give
(a NaN scale, or +inf, and codes 0), is documented in include/fgemm/quantize_int8.hpp.

The kernels read bfloat16, float16 and float32; other floating-point dtypes are converted to float32 first.
"""

from typing import Tuple

import torch

from . import _ops_quantize_int8 as _ops
from .eager import runs_eagerly
from .quantize import _check_flag, _check_input, _kernel_input

_KERNEL_DTYPES = (torch.bfloat16, torch.float16, torch.float32)
# The widths of the blocks per_token_group_cast_to_int8 scales.
_GROUP_SIZES = (32, 64, 128)


def _check_group_size(group_size, op: str) -> None:
    if isinstance(group_size, bool) or not isinstance(group_size, int):
        raise TypeError(f"fgemm.{op}: argument 'group_size' expected an int, got {type(group_size).__name__}")
    if group_size not in _GROUP_SIZES:
        raise ValueError(f"fgemm.{op}: argument 'group_size' must be 32, 64 or 128, got {group_size}")


def per_token_cast_to_int8(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """x [M, K] (or [G, M, K]), any float dtype and layout -> (x_int8 [M, K] int8, contiguous; sf [M] float32),
    with x ~= x_int8 * sf[..., None]: one scale per token (row)."""
    op = "per_token_cast_to_int8"
    _check_input(x, "x", op)
    x = _kernel_input(x, _KERNEL_DTYPES)
    if runs_eagerly(x):
        return _ops.quantize_per_token(x)
    return _ops.per_token_cast_to_int8(x)


def per_channel_cast_to_int8(w: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """w [N, K] (or [G, N, K]), any float dtype and layout -> (w_int8 [N, K] int8, contiguous; sf [N] float32),
    with w ~= w_int8 * sf[..., None]: one scale per output channel (row)."""
    op = "per_channel_cast_to_int8"
    _check_input(w, "w", op)
    w = _kernel_input(w, _KERNEL_DTYPES)
    if runs_eagerly(w):
        return _ops.quantize_per_channel(w)
    return _ops.per_channel_cast_to_int8(w)


def per_token_group_cast_to_int8(x: torch.Tensor, group_size: int = 128, *,
                                 mn_major_scales: bool = False) -> Tuple[torch.Tensor, torch.Tensor]:
    """x [M, K] (or [G, M, K]), any float dtype and layout -> (x_int8 [M, K] int8, contiguous;
    sf [M, ceil(K/group_size)] float32), with x ~= x_int8 * sf repeated over each 1 x group_size block.

    group_size: 32, 64 or 128 (128: the activations of the INT8 GEMMs' block recipe).
    mn_major_scales: write sf straight into the MN-major, TMA-aligned layout of get_mn_major_tma_aligned_tensor
    (strides (1, aligned M)) instead of row-major.
    """
    op = "per_token_group_cast_to_int8"
    _check_input(x, "x", op)
    _check_group_size(group_size, op)
    _check_flag(mn_major_scales, "mn_major_scales", op)
    x = _kernel_input(x, _KERNEL_DTYPES)
    if runs_eagerly(x):
        return _ops.quantize_per_token_group(x, group_size, mn_major_scales)
    return _ops.per_token_group_cast_to_int8(x, group_size, mn_major_scales)


def per_block_cast_to_int8(w: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """w [N, K] (or [G, N, K]), any float dtype and layout -> (w_int8 [N, K] int8,
    sf [ceil(N/128), ceil(K/128)] float32), both contiguous, with w ~= w_int8 * sf repeated over each 128x128
    block."""
    op = "per_block_cast_to_int8"
    _check_input(w, "w", op)
    w = _kernel_input(w, _KERNEL_DTYPES)
    if runs_eagerly(w):
        return _ops.quantize_per_block(w)
    return _ops.per_block_cast_to_int8(w)
