"""The three FP8 GEMMs with DeepGEMM's calling convention: operands as pairs (tensor, scales), D written in
place, DeepGEMM's keyword arguments accepted where they describe what fgemm does.

An eager call on ordinary tensors runs the extension directly and bumps d's version counter, as the op would;
any other call (torch.compile, FakeTensor, meta tensors, dispatch modes) goes through torch.ops.fgemm.
"""

from typing import List, Optional, Sequence, Tuple

import torch

from . import _C, _arguments, _ops
from .eager import increment_version, runs_eagerly

TensorPair = Tuple[torch.Tensor, torch.Tensor]

_OPTIONS_DOC = """

    DeepGEMM's keyword arguments are accepted where they describe what fgemm does: recipe (1, 128, 128)
    (recipe_a (1, 128), recipe_b (128, 128)), (1, 1, 128) (recipe_b (1, 128)) where the operation takes recipe
    1D1D, or None; compiled_dims any string (fgemm specialises its kernels
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
    TMA-aligned, the fast layout on the GPU). b = (b, sfb): b [N, K] float8_e4m3fn and sfb float32, whose shape
    names the recipe: [ceil(N/128), ceil(K/128)] for 1D2D (B per 128x128 block, a weight) or [N, ceil(K/128)]
    for 1D1D (B per 1x128 block like A: weight gradients, recipe=(1, 1, 128)). d [M, N] bfloat16 or float32;
    c (optional) [M, N] float32 or d's dtype, which may be d itself (accumulation in place, as DeepGEMM's c=d;
    into a weight gradient's float32 main_grad). d is rounded once, from C + A·B. CUDA tensors run on the current
    torch stream, CPU tensors on the CPU backend."""
    if runs_eagerly(d):
        _C.fp8_gemm_nt(a, b, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
        increment_version(d)
        return
    op = "fp8_gemm_nt"
    operands = _arguments.gemm_operands(op, a, b, d, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast,
                                        takes_1d1d=True)
    _ops.fp8_gemm_nt(*operands, _arguments.optional_tensor(c, op, "c"))


@_with_options_doc
def m_grouped_fp8_gemm_nt_contiguous(a: TensorPair, b: TensorPair, d: torch.Tensor, m_indices: torch.Tensor,
                                     recipe: Optional[Sequence[int]] = None,
                                     recipe_a: Optional[Sequence[int]] = None,
                                     recipe_b: Optional[Sequence[int]] = None, compiled_dims: str = "nk",
                                     disable_ue8m0_cast: bool = False, use_psum_layout: bool = False, *,
                                     d_row_starts: Optional[torch.Tensor] = None) -> None:
    """Grouped GEMM, contiguous layout (MoE): row m of d = row m of A @ B[g]^T, g the group of row m.

    a [M_sum, K], sfa [M_sum, ceil(K/128)], b [G, N, K], sfb [G, ceil(N/128), ceil(K/128)], d [M_sum, N]
    bfloat16 or float32. m_indices int32 [M_sum] gives the group of each row, -1 marks a padding row whose row
    of d is left as it was. With use_psum_layout=True (DeepGEMM's prefix-sum layout, which it calls
    grouped_layout), m_indices is int32 [G] instead, the prefix sums of the groups' rows: group g's rows run from
    m_indices[g - 1] rounded up to a multiple of 128 (0 for g = 0) to m_indices[g]; rows in no group's range are
    left as they were.

    d_row_starts (fgemm's, the prefix-sum layout only): int32 [G] on the device of a; d [T, N] then holds the
    groups' rows without their padding, the i-th row of group g at row d_row_starts[g] + i (the tokens' order of
    a layer whose tokens are sorted by expert: no gather after the GEMM). Rows at or past T are not written."""
    if runs_eagerly(d):
        _C.m_grouped_fp8_gemm_nt_contiguous(a, b, d, m_indices, recipe, recipe_a, recipe_b, compiled_dims,
                                            disable_ue8m0_cast, use_psum_layout, d_row_starts)
        increment_version(d)
        return
    op = "m_grouped_fp8_gemm_nt_contiguous"
    operands = _arguments.gemm_operands(op, a, b, d, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)
    use_psum_layout = _arguments.bool_argument(use_psum_layout, op, "use_psum_layout")
    d_row_starts = _arguments.optional_tensor(d_row_starts, op, "d_row_starts")
    _ops.m_grouped_fp8_gemm_nt_contiguous(*operands, _arguments.tensor(m_indices, op, "m_indices"), use_psum_layout,
                                          d_row_starts)


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


def k_grouped_fp8_gemm_nt_contiguous(a: TensorPair, b: TensorPair, d: torch.Tensor, ks: List[int],
                                     ks_tensor: torch.Tensor, c: Optional[torch.Tensor] = None,
                                     recipe: Sequence[int] = (1, 1, 128), compiled_dims: str = "mn",
                                     use_psum_layout: bool = False) -> None:
    """Mixture-of-experts weight gradients, K grouped (recipe 1D1D): d[g] = c[g] + A_g @ B_g^T.

    Expert g owns ks[g] values of K (a multiple of 128, possibly 0). a = (a, sfa): a float8_e4m3fn, flat [sum(ks) * M],
    expert g's K-major block [M, ks[g]] after the blocks of the experts before it; sfa float32 [M, sum(ks) / 128], one
    scale per 1x128 block along K (MN-major and TMA-aligned is the fast layout on the GPU). b = (b, sfb) likewise with
    N. ks: a list of ints (read on the host); ks_tensor: the same counts, int32 [G] on the device of a (read by the
    GPU). d [G, M, N] is float32, accumulating: c float32 [G, M, N] is then required and may be d (accumulation in
    place), DeepGEMM's semantics. Or d is bfloat16, the gradient itself, with c optional (float32 apart from d, or
    bfloat16, possibly d itself). An expert with no K gets d[g] = c[g], or zeros without c. DeepGEMM's sm90 names:
    recipe (1, 1, 128) alone, compiled_dims any str, use_psum_layout False alone."""
    if runs_eagerly(d):
        _C.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, ks_tensor, c, recipe, compiled_dims, use_psum_layout)
        increment_version(d)
        return
    op = "k_grouped_fp8_gemm_nt_contiguous"
    if _arguments.deepgemm_options(op, recipe, None, None, compiled_dims, False, takes_1d1d=True) != 1:
        raise ValueError(f"fgemm.{op}: argument 'recipe' must be (1, 1, 128): A and B are scaled per 1x128 "
                         f"block, got {recipe!r}")
    if _arguments.bool_argument(use_psum_layout, op, "use_psum_layout"):
        raise ValueError(f"fgemm.{op}: argument 'use_psum_layout' must be False: the experts' K are given as "
                         f"counts (ks, ks_tensor)")
    a, sfa = _arguments.tensor_pair(a, op, "a", "sfa")
    b, sfb = _arguments.tensor_pair(b, op, "b", "sfb")
    d = _arguments.tensor(d, op, "d")
    ks = _arguments.int_list(ks, op, "ks")
    ks_tensor = _arguments.tensor(ks_tensor, op, "ks_tensor")
    c = None if c is None else _arguments.tensor(c, op, "c")
    _ops.k_grouped_fp8_gemm_nt_contiguous(a, sfa, b, sfb, d, ks, ks_tensor, c)
