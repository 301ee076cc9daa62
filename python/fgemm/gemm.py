"""The three FP8 GEMMs with DeepGEMM's calling convention: operands as pairs (tensor, scales), D written in
place, DeepGEMM's keyword arguments accepted where they describe what fgemm does.

An eager call on ordinary tensors runs the extension directly and bumps d's version counter, as the op would;
any other call (torch.compile, FakeTensor, meta tensors, dispatch modes) goes through torch.ops.fgemm.
"""

from typing import Optional, Sequence, Tuple

import torch

from . import _C, _arguments, _ops
from .eager import increment_version, runs_eagerly

TensorPair = Tuple[torch.Tensor, torch.Tensor]

_OPTIONS_DOC = """

    DeepGEMM's keyword arguments are accepted where they describe what fgemm does: recipe (1, 128, 128)
    (recipe_a (1, 128), recipe_b (128, 128)) or None; compiled_dims any string (fgemm specialises its kernels
    on every dimension anyway); disable_ue8m0_cast True or False (on Hopper neither casts the FP32 scales).
    Any other value raises ValueError or TypeError."""


def _with_options_doc(function):
    """Appends the paragraph on DeepGEMM's keyword arguments to a GEMM's docstring."""
    function.__doc__ += _OPTIONS_DOC
    return function


@_with_options_doc
def fp8_gemm_nt(a: TensorPair, b: TensorPair, d: torch.Tensor, c: Optional[torch.Tensor] = None,
                recipe: Optional[Sequence[int]] = None, recipe_a: Optional[Sequence[int]] = None,
                recipe_b: Optional[Sequence[int]] = None, compiled_dims: str = "nk",
                disable_ue8m0_cast: bool = False) -> None:
    """D = A @ B^T (+ C), written into d.

    a = (a, sfa): a [M, K] float8_e4m3fn, sfa [M, ceil(K/128)] float32 (row-major, or MN-major and
    TMA-aligned, the fast layout on the GPU). b = (b, sfb): b [N, K] float8_e4m3fn, sfb [ceil(N/128),
    ceil(K/128)] float32. d [M, N] bfloat16 or float32; c (optional) [M, N] float32. CUDA tensors run on the
    current torch stream, CPU tensors on the CPU backend."""
    if runs_eagerly(d):
        _C.fp8_gemm_nt(a, b, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
        increment_version(d)
        return
    op = "fp8_gemm_nt"
    operands = _arguments.gemm_operands(op, a, b, d, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    _ops.fp8_gemm_nt(*operands, _arguments.optional_tensor(c, op, "c"))


@_with_options_doc
def m_grouped_fp8_gemm_nt_contiguous(a: TensorPair, b: TensorPair, d: torch.Tensor, m_indices: torch.Tensor,
                                     recipe: Optional[Sequence[int]] = None,
                                     recipe_a: Optional[Sequence[int]] = None,
                                     recipe_b: Optional[Sequence[int]] = None, compiled_dims: str = "nk",
                                     disable_ue8m0_cast: bool = False, use_psum_layout: bool = False) -> None:
    """Grouped GEMM, contiguous layout (MoE): row m of d = row m of A @ B[g]^T, g the group of row m.

    a [M_sum, K], sfa [M_sum, ceil(K/128)], b [G, N, K], sfb [G, ceil(N/128), ceil(K/128)], d [M_sum, N]
    bfloat16 or float32. m_indices int32 [M_sum] gives the group of each row, -1 marks a padding row whose row
    of d is left as it was. With use_psum_layout=True (DeepGEMM's prefix-sum layout, which it calls
    grouped_layout), m_indices is int32 [G] instead, the prefix sums of the groups' rows: group g's rows run from
    m_indices[g - 1] rounded up to a multiple of 128 (0 for g = 0) to m_indices[g]; rows in no group's range are
    left as they were."""
    if runs_eagerly(d):
        _C.m_grouped_fp8_gemm_nt_contiguous(a, b, d, m_indices, recipe, recipe_a, recipe_b, compiled_dims,
                                            disable_ue8m0_cast, use_psum_layout)
        increment_version(d)
        return
    op = "m_grouped_fp8_gemm_nt_contiguous"
    operands = _arguments.gemm_operands(op, a, b, d, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    use_psum_layout = _arguments.bool_argument(use_psum_layout, op, "use_psum_layout")
    _ops.m_grouped_fp8_gemm_nt_contiguous(*operands, _arguments.tensor(m_indices, op, "m_indices"), use_psum_layout)


@_with_options_doc
def m_grouped_fp8_gemm_nt_masked(a: TensorPair, b: TensorPair, d: torch.Tensor, masked_m: torch.Tensor,
                                 expected_m: int, recipe: Optional[Sequence[int]] = None,
                                 recipe_a: Optional[Sequence[int]] = None,
                                 recipe_b: Optional[Sequence[int]] = None, compiled_dims: str = "nk",
                                 disable_ue8m0_cast: bool = False) -> None:
    """Grouped GEMM, masked layout (MoE): d[g, :masked_m[g]] = A[g, :masked_m[g]] @ B[g]^T.

    a [G, M_max, K], sfa [G, M_max, ceil(K/128)], b [G, N, K], sfb [G, ceil(N/128), ceil(K/128)],
    d [G, M_max, N] bfloat16 or float32; only the first masked_m[g] rows of group g are computed (masked_m
    int32 [G], on the device of a, never read by the host; rows past it keep what they held). expected_m is a
    positive hint of the typical masked_m."""
    if runs_eagerly(d):
        _C.m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, expected_m, recipe, recipe_a, recipe_b, compiled_dims,
                                        disable_ue8m0_cast)
        increment_version(d)
        return
    op = "m_grouped_fp8_gemm_nt_masked"
    operands = _arguments.gemm_operands(op, a, b, d, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    _ops.m_grouped_fp8_gemm_nt_masked(*operands, _arguments.tensor(masked_m, op, "masked_m"),
                                      _arguments.int_argument(expected_m, op, "expected_m"))
