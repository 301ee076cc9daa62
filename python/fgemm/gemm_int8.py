"""The INT8 GEMMs, with the FP8 GEMMs' calling convention: operands as pairs (tensor, scales), D written in
place. The shapes of the scales name the recipe: per token and per channel (W8A8, the scales applied once to
each exact INT32 sum), or DeepSeek's 1x128 / 128x128 blocks (each 128-wide K block's exact INT32 sum scaled and
promoted into FP32, as FP8's). Without scales, int8_gemm_nt(a, b, d) writes the exact INT32 product into an
int32 d, as torch._int_mm does.

An eager call on ordinary tensors runs the extension directly and bumps d's version counter, as the op would;
any other call (torch.compile, FakeTensor, meta tensors, dispatch modes) goes through torch.ops.fgemm.
"""

from typing import Optional, Tuple, Union

import torch

from . import _C, _arguments, _ops_int8
from .eager import increment_version, runs_eagerly

TensorPair = Tuple[torch.Tensor, torch.Tensor]


def int8_gemm_nt(a: Union[TensorPair, torch.Tensor], b: Union[TensorPair, torch.Tensor], d: torch.Tensor,
                 c: Optional[torch.Tensor] = None, bias: Optional[torch.Tensor] = None) -> None:
    """D = C + bias + the scaled sums of A @ B^T, written into d.

    a = (a, sa), b = (b, sb): a [M, K] and b [N, K] int8, the scales float32. Per token and per channel: sa
    [M], [M, 1] or 0-d (one scale for the tensor), sb [N], [1, N] or 0-d; D = sa[m] * sb[n] * (exact INT32
    sum). DeepSeek's blocks: sa [M, ceil(K/128)], sb [ceil(N/128), ceil(K/128)]. d [M, N] bfloat16, float16 or
    float32; c (optional) [M, N] float32 or d's 16-bit dtype; bias (optional) [N], float32 or d's dtype.

    Exact: with a and b plain int8 tensors, d int32 [M, N] receives A @ B^T summed exactly in INT32 (wrapping
    modulo 2^32 past the int32 range, which int8 sums reach only beyond K = 131072); c and bias must be None.
    CUDA tensors run on the current torch stream, CPU tensors on the CPU backend."""
    if runs_eagerly(d):
        _C.int8_gemm_nt(a, b, d, c, bias)
        increment_version(d)
        return
    op = "int8_gemm_nt"
    d = _arguments.tensor(d, op, "d")
    if isinstance(a, (tuple, list)):
        a, sa = _arguments.tensor_pair(a, op, "a", "sa")
        b, sb = _arguments.tensor_pair(b, op, "b", "sb")
        _ops_int8.int8_gemm_nt(a, sa, b, sb, d, _arguments.optional_tensor(c, op, "c"),
                               _arguments.optional_tensor(bias, op, "bias"))
        return
    a = _arguments.tensor(a, op, "a")
    b = _arguments.tensor(b, op, "b")
    for name, value in (("c", c), ("bias", bias)):
        if value is not None:
            raise ValueError(f"fgemm.{op}: argument '{name}' must be None for the exact INT32 product (a and b "
                             f"without scales)")
    _ops_int8.int8_gemm_nt_exact(a, b, d)


def m_grouped_int8_gemm_nt_contiguous(a: TensorPair, b: TensorPair, d: torch.Tensor, grouped_layout: torch.Tensor,
                                      use_psum_layout: bool = False) -> None:
    """Grouped INT8 GEMM, contiguous layout (MoE): row m of d = the scaled row m of A @ B[g]^T, g its group.

    a = (a [M_sum, K] int8, sa), b = (b [G, N, K] int8, sb), d [M_sum, N] bfloat16, float16 or float32. Per
    token and channel: sa [M_sum] (or [M_sum, 1], or 0-d) with sb [G, N] (or [G], one scale per expert);
    DeepSeek's blocks: sa [M_sum, ceil(K/128)] with sb [G, ceil(N/128), ceil(K/128)]. grouped_layout int32
    [M_sum] gives each row's group, -1 for padding; with use_psum_layout=True it is [G], the prefix sums of the
    groups' rows (group g's rows run from grouped_layout[g - 1] rounded up to a multiple of 128, 0 for g = 0,
    to grouped_layout[g]). Rows in no group keep what d held."""
    if runs_eagerly(d):
        _C.m_grouped_int8_gemm_nt_contiguous(a, b, d, grouped_layout, use_psum_layout)
        increment_version(d)
        return
    op = "m_grouped_int8_gemm_nt_contiguous"
    a, sa = _arguments.tensor_pair(a, op, "a", "sa")
    b, sb = _arguments.tensor_pair(b, op, "b", "sb")
    use_psum_layout = _arguments.bool_argument(use_psum_layout, op, "use_psum_layout")
    _ops_int8.m_grouped_int8_gemm_nt_contiguous(a, sa, b, sb, _arguments.tensor(d, op, "d"),
                                                _arguments.tensor(grouped_layout, op, "grouped_layout"),
                                                use_psum_layout)


def m_grouped_int8_gemm_nt_masked(a: TensorPair, b: TensorPair, d: torch.Tensor, masked_m: torch.Tensor,
                                  expected_m: int) -> None:
    """Grouped INT8 GEMM, masked layout (MoE): d[g, :masked_m[g]] = the scaled a[g, :masked_m[g]] @ b[g]^T.

    a = (a [G, M_max, K] int8, sa), b = (b [G, N, K] int8, sb), d [G, M_max, N] bfloat16, float16 or float32.
    Per token and channel: sa [G, M_max] (or [G, M_max, 1]) with sb [G, N] (or [G]); DeepSeek's blocks: sa
    [G, M_max, ceil(K/128)] with sb [G, ceil(N/128), ceil(K/128)]. masked_m int32 [G] on the device of a (never
    read by the host, so the call can be captured in a CUDA graph; rows past it keep what d held); expected_m
    a positive hint of the typical masked_m, for the kernel's configuration."""
    if runs_eagerly(d):
        _C.m_grouped_int8_gemm_nt_masked(a, b, d, masked_m, expected_m)
        increment_version(d)
        return
    op = "m_grouped_int8_gemm_nt_masked"
    a, sa = _arguments.tensor_pair(a, op, "a", "sa")
    b, sb = _arguments.tensor_pair(b, op, "b", "sb")
    _ops_int8.m_grouped_int8_gemm_nt_masked(a, sa, b, sb, _arguments.tensor(d, op, "d"),
                                            _arguments.tensor(masked_m, op, "masked_m"),
                                            _arguments.int_argument(expected_m, op, "expected_m"))
