"""Quantization to FP8 E4M3 with DeepSeek-V3's fine-grained scales, and its inverse.

Activations get one FP32 scale per 1x128 block (per token, per 128 channels of K), weights one per 128x128
block; each scale is the block's largest magnitude divided by 448 (E4M3's largest finite value), with that
magnitude clamped below at 1e-4 so that all-zero blocks get a usable scale. K and N need not be multiples of
128: the last blocks are partial. CUDA tensors are quantized by one GPU kernel on the current torch stream,
CPU tensors by the CPU backend, with the same bits. The exact arithmetic, and what NaN and infinities give,
is documented in include/fgemm/quantize.hpp.
"""

from typing import Sequence, Tuple

import torch

from . import _arguments, _ops
from ._buffers import BLOCK as _BLOCK
from .eager import runs_eagerly
# The input dtypes the kernels read; other floating-point inputs are converted to float32 first (exactly, for
# float16, at the cost of one more pass over the input).
_KERNEL_DTYPES = (torch.bfloat16, torch.float32)


def _check_input(x, name: str, op: str, matrix_only: bool = False) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"fgemm.{op}: argument '{name}' expected a torch.Tensor, got {type(x).__name__}")
    dims = (2,) if matrix_only else (2, 3)
    if x.dim() not in dims or not x.is_floating_point():
        raise ValueError(f"fgemm.{op}: argument '{name}' expected a floating-point tensor of "
                         f"{' or '.join(map(str, dims))} dimensions, got shape {list(x.shape)} of {x.dtype}")


def _check_flag(value, name: str, op: str) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"fgemm.{op}: argument '{name}' expected a bool, got {type(value).__name__}")


def _check_gran_k(gran_k, op: str) -> None:
    if gran_k != _BLOCK:
        raise ValueError(f"fgemm.{op}: argument 'gran_k' must be 128 (fgemm scales blocks of 128 columns), "
                         f"got {gran_k!r}")


def _kernel_input(x: torch.Tensor, kernel_dtypes: Tuple[torch.dtype, ...] = _KERNEL_DTYPES) -> torch.Tensor:
    """x in a dtype the kernels read (one of kernel_dtypes, else float32), its last dimension contiguous: converted
    or copied where it is not."""
    if x.dtype not in kernel_dtypes:
        x = x.float()
    return x if x.size(-1) <= 1 or x.stride(-1) == 1 else x.contiguous()


def per_token_cast_to_fp8(x: torch.Tensor, use_ue8m0: bool = False, gran_k: int = 128, *,
                          mn_major_scales: bool = False) -> Tuple[torch.Tensor, torch.Tensor]:
    """x [M, K] (or [G, M, K]), any float dtype and layout -> (x_fp8 [M, K] float8_e4m3fn, contiguous;
    sfa [M, ceil(K/128)] float32), with x ~= x_fp8 * sfa repeated over each 1x128 block.

    use_ue8m0: round each scale up to a power of two (as DeepGEMM's argument of that name).
    gran_k: DeepGEMM's block width; only 128.
    mn_major_scales: write sfa straight into the MN-major, TMA-aligned layout of
    get_mn_major_tma_aligned_tensor (strides (1, aligned M)) instead of row-major.
    """
    op = "per_token_cast_to_fp8"
    _check_input(x, "x", op)
    _check_flag(use_ue8m0, "use_ue8m0", op)
    _check_gran_k(gran_k, op)
    _check_flag(mn_major_scales, "mn_major_scales", op)
    x = _kernel_input(x)
    if runs_eagerly(x):
        return _ops.quantize_per_token(x, use_ue8m0, mn_major_scales)
    return _ops.per_token_cast_to_fp8(x, use_ue8m0, mn_major_scales)


def per_block_cast_to_fp8(w: torch.Tensor, use_ue8m0: bool = False,
                          gran_k: int = 128) -> Tuple[torch.Tensor, torch.Tensor]:
    """w [N, K] (or [G, N, K]), any float dtype and layout -> (w_fp8 [N, K] float8_e4m3fn,
    sfb [ceil(N/128), ceil(K/128)] float32), both contiguous, with w ~= w_fp8 * sfb repeated over each 128x128
    block.

    use_ue8m0: round each scale up to a power of two. gran_k: only 128.
    """
    op = "per_block_cast_to_fp8"
    _check_input(w, "w", op)
    _check_flag(use_ue8m0, "use_ue8m0", op)
    _check_gran_k(gran_k, op)
    w = _kernel_input(w)
    if runs_eagerly(w):
        return _ops.quantize_per_block(w, use_ue8m0)
    return _ops.per_block_cast_to_fp8(w, use_ue8m0)


def cast_transpose_to_fp8(x: torch.Tensor, use_ue8m0: bool = False, *, mn_major_scales: bool = True
                          ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """FP8 training's cast-transpose: x [M, K], any float dtype and layout, read once -> (x_fp8 [M, K],
    sf [M, ceil(K/128)], xt_fp8 [K, M], sft [K, ceil(M/128)]), with the bits of per_token_cast_to_fp8(x) and of
    per_token_cast_to_fp8(x.t()): x ~= x_fp8 * sf over each 1x128 block of a row, and x.t() ~= xt_fp8 * sft over
    each 1x128 block of a row of the transpose (a 128x1 block of x). The codes are float8_e4m3fn and contiguous.

    use_ue8m0: round each scale up to a power of two.
    mn_major_scales: sf and sft in the MN-major, TMA-aligned layout of get_mn_major_tma_aligned_tensor (what the
    GEMMs read), else row-major.
    """
    op = "cast_transpose_to_fp8"
    _check_input(x, "x", op, matrix_only=True)
    _check_flag(use_ue8m0, "use_ue8m0", op)
    _check_flag(mn_major_scales, "mn_major_scales", op)
    x = _kernel_input(x)
    if runs_eagerly(x):
        return _ops.cast_transpose(x, use_ue8m0, mn_major_scales)
    return _ops.cast_transpose_to_fp8(x, use_ue8m0, mn_major_scales)


def per_block_cast_transpose_to_fp8(x: torch.Tensor, use_ue8m0: bool = False
                                    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The cast-transpose of a weight for FP8 training, whose input gradient reads the weight transposed: x [N, K],
    any float dtype and layout, read once -> (x_fp8 [N, K], sf [ceil(N/128), ceil(K/128)], xt_fp8 [K, N],
    sft [ceil(K/128), ceil(N/128)]), with the bits of per_block_cast_to_fp8(x) and of per_block_cast_to_fp8(x.t()):
    a 128x128 block of x is one of its transpose, so xt_fp8 and sft are x_fp8 and sf transposed. All contiguous.

    The experts' weights of a grouped layer, x [G, N, K], are one call: each matrix as above, every output with a
    leading G (xt_fp8 [G, K, N], the bits of per_block_cast_to_fp8(x.transpose(1, 2))).

    use_ue8m0: round each scale up to a power of two.
    """
    op = "per_block_cast_transpose_to_fp8"
    _check_input(x, "x", op)
    _check_flag(use_ue8m0, "use_ue8m0", op)
    x = _kernel_input(x)
    if runs_eagerly(x):
        return _ops.per_block_cast_transpose(x, use_ue8m0)
    return _ops.per_block_cast_transpose_to_fp8(x, use_ue8m0)


def grouped_cast_transpose_to_fp8(x: torch.Tensor, ks: Sequence[int], use_ue8m0: bool = False, *,
                                  mn_major_scales: bool = True
                                  ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The cast-transpose of the experts' rows for their weight gradient (a K-grouped GEMM's operands): x
    [sum(ks), H], expert g owning the ks[g] rows after those of the experts before it (any count, possibly 0).

    The outputs hold each expert's rows padded with zero rows to p_g = ks[g] rounded up to a multiple of 128 (the
    grouped GEMMs' aligned layout), from row s_g = sum(p[:g]), P = sum(p) rows in all: they are those of xp, x so
    padded (x itself where every ks[g] is a multiple of 128). -> (x_fp8 [P, H], sf [P, ceil(H/128)], xt_flat
    [P * H], sft [H, P/128]).

    x_fp8 and sf are per_token_cast_to_fp8(xp)'s. xt_flat holds expert g's transposed codes as a row-major
    [H, p_g] block from element s_g * H: per_token_cast_to_fp8(xp[s_g : s_g + p_g].t())'s codes. sft holds their
    scales, expert g's in columns s_g / 128 onwards (the sft of cast_transpose_to_fp8(xp)).

    use_ue8m0, mn_major_scales: as cast_transpose_to_fp8's.
    """
    op = "grouped_cast_transpose_to_fp8"
    _check_input(x, "x", op, matrix_only=True)
    ks = _arguments.int_list(ks, op, "ks")
    for g, k in enumerate(ks):  # before the outputs' rows are counted from them
        if k < 0:
            raise ValueError(f"fgemm.{op}: argument 'ks' expected non-negative counts, got ks[{g}] = {k}")
    _check_flag(use_ue8m0, "use_ue8m0", op)
    _check_flag(mn_major_scales, "mn_major_scales", op)
    x = _kernel_input(x)
    if runs_eagerly(x):
        return _ops.grouped_cast_transpose(x, ks, use_ue8m0, mn_major_scales)
    return _ops.grouped_cast_transpose_to_fp8(x, ks, use_ue8m0, mn_major_scales)


def _pad_last_dims(x: torch.Tensor, rows_multiple: int) -> torch.Tensor:
    """x with its last dimension padded with zeros to a multiple of 128, its second last to rows_multiple."""
    rows, cols = x.shape[-2:]
    pad_cols = -cols % _BLOCK
    pad_rows = -rows % rows_multiple
    if pad_cols == 0 and pad_rows == 0:
        return x
    return torch.nn.functional.pad(x, (0, pad_cols, 0, pad_rows))


def per_token_dequantize(x_fp8: torch.Tensor, sf: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The inverse of per_token_cast_to_fp8: x_fp8 [..., M, K] times its 1x128 scales sf [..., M, ceil(K/128)]
    (any strides), in `dtype`."""
    k = x_fp8.shape[-1]
    blocks = _pad_last_dims(x_fp8.to(dtype), 1).unflatten(-1, (-1, _BLOCK))
    return (blocks * sf.to(dtype).unsqueeze(-1)).flatten(-2)[..., :k]


def per_block_dequantize(w_fp8: torch.Tensor, sf: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The inverse of per_block_cast_to_fp8: w_fp8 [..., N, K] times its 128x128 scales
    sf [..., ceil(N/128), ceil(K/128)], in `dtype`."""
    n, k = w_fp8.shape[-2:]
    blocks = _pad_last_dims(w_fp8.to(dtype), _BLOCK).unflatten(-1, (-1, _BLOCK)).unflatten(-3, (-1, _BLOCK))
    scales = sf.to(dtype).unsqueeze(-1).unsqueeze(-3)  # [..., NB, 1, KB, 1]
    return (blocks * scales).flatten(-2).flatten(-3, -2)[..., :n, :k]
