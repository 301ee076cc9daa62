"""fgemm in place of DeepGEMM: `deep_gemm`'s names, arguments and environment variables for what fgemm
implements (its FP8 NT GEMMs and its BF16 and FP16 GEMMs, on Hopper and the CPU), and a NotImplementedError
naming each of DeepGEMM's functions that fgemm lacks.

    import fgemm.deep_gemm
    fgemm.deep_gemm.install()   # `import deep_gemm` (and deep_gemm.utils, deep_gemm.testing) now give these
    import deep_gemm

DG_JIT_CACHE_DIR and DG_PRINT_CONFIGS, read when this module is imported, set FGEMM_CACHE_DIR and
FGEMM_PRINT_CONFIGS where those are unset.
"""

import os
import sys
from typing import Optional, Sequence

import torch

import fgemm
from fgemm import calc_diff, get_num_sms, get_pdl, set_num_sms, set_pdl
from fgemm.deep_gemm import testing, utils
from fgemm.deep_gemm._missing import not_implemented_group
from fgemm.deep_gemm.utils import *  # noqa: F401,F403 (DeepGEMM exports its utils at the top level too)

# DeepGEMM's variable -> fgemm's, which the library reads when it first needs it (after this import).
ENVIRONMENT_ALIASES = {"DG_JIT_CACHE_DIR": "FGEMM_CACHE_DIR", "DG_PRINT_CONFIGS": "FGEMM_PRINT_CONFIGS"}


def _apply_environment_aliases() -> None:
    for deepgemm_name, fgemm_name in ENVIRONMENT_ALIASES.items():
        if deepgemm_name in os.environ and fgemm_name not in os.environ:
            os.environ[fgemm_name] = os.environ[deepgemm_name]


_apply_environment_aliases()

TensorPair = fgemm.gemm.TensorPair
Recipe = Optional[Sequence[int]]


def fp8_gemm_nt(a: TensorPair, b: TensorPair, d: torch.Tensor, c: Optional[torch.Tensor] = None,
                recipe: Recipe = None, recipe_a: Recipe = None, recipe_b: Recipe = None, compiled_dims: str = "nk",
                disable_ue8m0_cast: bool = False, alpha: Optional[float] = None) -> None:
    """fgemm.fp8_gemm_nt with DeepGEMM's arguments. alpha (a scale of D, on SM100 only) must be None."""
    if alpha is not None:
        raise ValueError(f"deep_gemm.fp8_gemm_nt: argument 'alpha' must be None (DeepGEMM applies it on SM100 "
                         f"only; fgemm implements Hopper), got {alpha!r}")
    fgemm.fp8_gemm_nt(a, b, d, c, recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast)


def _check_contiguous_options(op: str, use_psum_layout, ensure_zero_padding, expected_m_for_psum_layout) -> None:
    """DeepGEMM's options of the contiguous layout that fgemm accepts without their changing the result."""
    if not isinstance(ensure_zero_padding, bool):
        raise TypeError(f"{op}: argument 'ensure_zero_padding' expected a bool, got "
                        f"{type(ensure_zero_padding).__name__}")
    if expected_m_for_psum_layout is None:
        return
    if use_psum_layout is not True:
        raise ValueError(f"{op}: argument 'expected_m_for_psum_layout' must be None without use_psum_layout, got "
                         f"{expected_m_for_psum_layout!r}")
    if isinstance(expected_m_for_psum_layout, bool) or not isinstance(expected_m_for_psum_layout, int):
        raise TypeError(f"{op}: argument 'expected_m_for_psum_layout' expected an int or None, got "
                        f"{type(expected_m_for_psum_layout).__name__}")
    if expected_m_for_psum_layout <= 0:
        raise ValueError(f"{op}: argument 'expected_m_for_psum_layout' must be a positive hint of the rows per "
                         f"group, got {expected_m_for_psum_layout}")


_CONTIGUOUS_OPTIONS_DOC = """

    ensure_zero_padding may be True or False: it is read by DeepGEMM's SM100 kernels only, and fgemm, like
    DeepGEMM on Hopper, leaves the padding rows of d as they were. expected_m_for_psum_layout, a hint of the
    rows per group, may be None or a positive int with use_psum_layout=True and must be None without it; fgemm
    chooses its kernels from the layout itself."""


def _with_contiguous_options_doc(function):
    function.__doc__ += _CONTIGUOUS_OPTIONS_DOC
    return function


@_with_contiguous_options_doc
def m_grouped_fp8_gemm_nt_contiguous(a: TensorPair, b: TensorPair, d: torch.Tensor, grouped_layout: torch.Tensor,
                                     recipe: Recipe = None, recipe_a: Recipe = None, recipe_b: Recipe = None,
                                     compiled_dims: str = "nk", disable_ue8m0_cast: bool = False,
                                     use_psum_layout: bool = False, ensure_zero_padding: bool = True,
                                     expected_m_for_psum_layout: Optional[int] = None) -> None:
    """fgemm.m_grouped_fp8_gemm_nt_contiguous with DeepGEMM's arguments: grouped_layout is fgemm's m_indices
    (int32 [M_sum], -1 on padding rows; with use_psum_layout=True, int32 [G], the prefix sums of the groups'
    rows)."""
    op = "deep_gemm.m_grouped_fp8_gemm_nt_contiguous"
    _check_contiguous_options(op, use_psum_layout, ensure_zero_padding, expected_m_for_psum_layout)
    try:
        fgemm.m_grouped_fp8_gemm_nt_contiguous(a, b, d, grouped_layout, recipe, recipe_a, recipe_b, compiled_dims,
                                               disable_ue8m0_cast, use_psum_layout)
    except (TypeError, ValueError) as error:
        # fgemm's name of this argument is m_indices; the caller knows it as grouped_layout.
        message = str(error).replace("argument 'm_indices'", "argument 'grouped_layout'")
        raise type(error)(message) from None


def _contiguous_16bit(gemm):
    """fgemm's m-grouped contiguous 16-bit GEMM `gemm` with DeepGEMM's further arguments."""

    def with_deepgemm_options(a: torch.Tensor, b: torch.Tensor, d: torch.Tensor, grouped_layout: torch.Tensor,
                              compiled_dims: str = "nk", use_psum_layout: bool = False,
                              ensure_zero_padding: bool = True,
                              expected_m_for_psum_layout: Optional[int] = None) -> None:
        _check_contiguous_options(f"deep_gemm.{gemm.__name__}", use_psum_layout, ensure_zero_padding,
                                  expected_m_for_psum_layout)
        gemm(a, b, d, grouped_layout, compiled_dims, use_psum_layout)

    with_deepgemm_options.__name__ = with_deepgemm_options.__qualname__ = gemm.__name__
    with_deepgemm_options.__doc__ = f"fgemm.{gemm.__name__} with DeepGEMM's arguments." + _CONTIGUOUS_OPTIONS_DOC
    return with_deepgemm_options


m_grouped_fp8_gemm_nt_masked = fgemm.m_grouped_fp8_gemm_nt_masked
k_grouped_fp8_gemm_nt_contiguous = fgemm.k_grouped_fp8_gemm_nt_contiguous
# The 16-bit GEMMs take DeepGEMM's arguments as they are, but for the contiguous layout's further options.
bf16_gemm_nt, bf16_gemm_nn, bf16_gemm_tn, bf16_gemm_tt = (fgemm.bf16_gemm_nt, fgemm.bf16_gemm_nn, fgemm.bf16_gemm_tn,
                                                          fgemm.bf16_gemm_tt)
fp16_gemm_nt, fp16_gemm_nn, fp16_gemm_tn, fp16_gemm_tt = (fgemm.fp16_gemm_nt, fgemm.fp16_gemm_nn, fgemm.fp16_gemm_tn,
                                                          fgemm.fp16_gemm_tt)
m_grouped_bf16_gemm_nt_contiguous = _contiguous_16bit(fgemm.m_grouped_bf16_gemm_nt_contiguous)
m_grouped_bf16_gemm_nn_contiguous = _contiguous_16bit(fgemm.m_grouped_bf16_gemm_nn_contiguous)
m_grouped_fp16_gemm_nt_contiguous = _contiguous_16bit(fgemm.m_grouped_fp16_gemm_nt_contiguous)
m_grouped_fp16_gemm_nn_contiguous = _contiguous_16bit(fgemm.m_grouped_fp16_gemm_nn_contiguous)
m_grouped_bf16_gemm_nt_masked = fgemm.m_grouped_bf16_gemm_nt_masked
m_grouped_fp16_gemm_nt_masked = fgemm.m_grouped_fp16_gemm_nt_masked
k_grouped_bf16_gemm_tn_contiguous = fgemm.k_grouped_bf16_gemm_tn_contiguous
k_grouped_fp16_gemm_tn_contiguous = fgemm.k_grouped_fp16_gemm_tn_contiguous
# DeepGEMM's names of the same GEMMs that also take FP4 operands; fgemm takes FP8 ones (FP4 is a TypeError).
fp8_fp4_gemm_nt = fp8_gemm_nt
m_grouped_fp8_fp4_gemm_nt_contiguous = m_grouped_fp8_gemm_nt_contiguous
m_grouped_fp8_fp4_gemm_nt_masked = m_grouped_fp8_gemm_nt_masked


# DeepGEMM's earlier names, with their earlier argument names.
def gemm_fp8_fp8_bf16_nt(lhs: TensorPair, rhs: TensorPair, out: torch.Tensor) -> None:
    """DeepGEMM's earlier fp8_gemm_nt: out = lhs @ rhs^T."""
    fgemm.fp8_gemm_nt(lhs, rhs, out)


def m_grouped_gemm_fp8_fp8_bf16_nt_contiguous(lhs: TensorPair, rhs: TensorPair, out: torch.Tensor,
                                              m_indices: torch.Tensor) -> None:
    """DeepGEMM's earlier m_grouped_fp8_gemm_nt_contiguous."""
    fgemm.m_grouped_fp8_gemm_nt_contiguous(lhs, rhs, out, m_indices)


def m_grouped_gemm_fp8_fp8_bf16_nt_masked(lhs: TensorPair, rhs: TensorPair, out: torch.Tensor,
                                          masked_m: torch.Tensor, expected_m: int) -> None:
    """DeepGEMM's earlier m_grouped_fp8_gemm_nt_masked."""
    fgemm.m_grouped_fp8_gemm_nt_masked(lhs, rhs, out, masked_m, expected_m)


_MISSING = {
    **not_implemented_group("GEMMs with an MN-major A or B (NN, TN, TT layouts)",
                            "fp8_gemm_nn fp8_gemm_tn fp8_gemm_tt fp8_fp4_gemm_nn fp8_fp4_gemm_tn fp8_fp4_gemm_tt "
                            "m_grouped_fp8_gemm_nn_contiguous m_grouped_fp8_fp4_gemm_nn_contiguous"),
    **not_implemented_group("GEMM that skips rows of D", "fp8_gemm_nt_skip_head_mid"),
    **not_implemented_group("K-grouped FP8 GEMM with MN-major operands (SM100's), nor FP4 ones",
                            "k_grouped_fp8_gemm_tn_contiguous k_grouped_fp4_gemm_nt_contiguous"),
    **not_implemented_group("FP4 GEMMs",
                            "fp4_gemm_nt m_grouped_fp4_gemm_nt_contiguous m_grouped_fp4_gemm_nt_masked"),
    **not_implemented_group("cuBLASLt wrappers",
                            "cublaslt_gemm_nt cublaslt_gemm_nn cublaslt_gemm_tn cublaslt_gemm_tt "
                            "cublaslt_nvfp4_gemm_nt batched_syrk batched_symm"),
    **not_implemented_group("einsum kernels", "einsum fp8_einsum"),
    **not_implemented_group("attention (MQA logits) kernels",
                            "fp8_fp4_mqa_logits get_mqa_logits_metadata get_paged_mqa_logits_metadata "
                            "get_sparse_mqa_logits_metadata get_paged_sparse_mqa_logits_metadata "
                            "fp8_fp4_sparse_mqa_logits fp8_fp4_paged_sparse_mqa_logits fp8_fp4_paged_mqa_logits "
                            "fp8_mqa_logits fp8_paged_mqa_logits"),
    **not_implemented_group("hyper-connection kernels", "mega_mhc tf32_hc_prenorm_gemm"),
    **not_implemented_group("MegaMoE or MegaGate kernels",
                            "bf16_mega_gate get_bf16_mega_gate_config get_block_m_for_mega_moe SymmBuffer "
                            "SM90SymmBuffer get_symm_buffer_for_mega_moe get_symm_buffer_for_sm90_mega_moe "
                            "transform_weights_for_mega_moe transform_weights_for_mega_moe_sm90 fp8_fp4_mega_moe "
                            "fp8_mega_moe fp4_fp4_mega_moe bf16_mega_moe"),
    **not_implemented_group("such runtime setting",
                            "set_tc_util get_tc_util set_ignore_compile_dims set_block_size_multiple_of "
                            "use_deterministic_algorithms"),
}
globals().update(_MISSING)


def install() -> None:
    """Makes `import deep_gemm`, `import deep_gemm.utils` and `import deep_gemm.testing` give this module and
    its two submodules, for code written for DeepGEMM. Call it before that code imports deep_gemm."""
    sys.modules["deep_gemm"] = sys.modules[__name__]
    sys.modules["deep_gemm.utils"] = utils
    sys.modules["deep_gemm.testing"] = testing


IMPLEMENTED = [
    "fp8_gemm_nt", "m_grouped_fp8_gemm_nt_contiguous", "m_grouped_fp8_gemm_nt_masked", "fp8_fp4_gemm_nt",
    "m_grouped_fp8_fp4_gemm_nt_contiguous", "m_grouped_fp8_fp4_gemm_nt_masked", "gemm_fp8_fp8_bf16_nt",
    "m_grouped_gemm_fp8_fp8_bf16_nt_contiguous", "m_grouped_gemm_fp8_fp8_bf16_nt_masked", "set_num_sms",
    "get_num_sms", "set_pdl", "get_pdl", "calc_diff", "k_grouped_fp8_gemm_nt_contiguous", *fgemm.gemm_16bit.NAMES,
    *utils.IMPLEMENTED,
]
__all__ = IMPLEMENTED + sorted(_MISSING) + sorted(utils._MISSING) + ["install", "utils", "testing"]
