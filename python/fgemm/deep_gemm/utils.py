"""deep_gemm.utils as fgemm provides it: the helpers DeepGEMM's users import from there (the quantizers, the
scale layouts, the alignments), with DeepGEMM's argument names; the FP4 and packed-UE8M0 helpers, which serve
GPUs other than Hopper, raise NotImplementedError."""

from typing import Optional, Sequence, Tuple

import torch

import fgemm
from fgemm.deep_gemm._missing import not_implemented_group


ceil_div = fgemm.ceil_div


def align(x: int, y: int) -> int:
    """x rounded up to a multiple of y."""
    return fgemm.ceil_div(x, y) * y


def get_tma_aligned_size(mn: int, element_size: int) -> int:
    """mn rounded up so that mn elements of element_size bytes span a multiple of 16 bytes."""
    return fgemm.get_tma_aligned_size(mn, element_size)


def get_mk_alignment_for_contiguous_layout() -> int:
    """Each group's rows in the m-grouped contiguous layout start at a multiple of this (128)."""
    return fgemm.get_m_alignment_for_contiguous_layout()


get_m_alignment_for_contiguous_layout = get_mk_alignment_for_contiguous_layout
get_mn_major_tma_aligned_tensor = fgemm.get_mn_major_tma_aligned_tensor
get_col_major_tma_aligned_tensor = fgemm.get_col_major_tma_aligned_tensor


def per_token_cast_to_fp8(x: torch.Tensor, use_ue8m0: bool = False, gran_k: int = 128,
                          use_packed_ue8m0: bool = False) -> Tuple[torch.Tensor, torch.Tensor]:
    """fgemm.per_token_cast_to_fp8 with DeepGEMM's arguments; use_packed_ue8m0=True (scales packed four to an
    int32, for Blackwell) raises NotImplementedError."""
    if use_packed_ue8m0 is not False:
        raise NotImplementedError("deep_gemm.utils.per_token_cast_to_fp8: use_packed_ue8m0=True is not implemented "
                                  "by fgemm, whose GEMMs take FP32 scales")
    return fgemm.per_token_cast_to_fp8(x, use_ue8m0, gran_k)


def per_block_cast_to_fp8(x: torch.Tensor, use_ue8m0: bool = False,
                          gran_k: int = 128) -> Tuple[torch.Tensor, torch.Tensor]:
    """fgemm.per_block_cast_to_fp8 with DeepGEMM's arguments."""
    return fgemm.per_block_cast_to_fp8(x, use_ue8m0, gran_k)


def transform_sf_into_required_layout(sf: torch.Tensor, mn: int, k: int, recipe: Sequence[int],
                                      num_groups: Optional[int] = None, is_sfa: Optional[bool] = None,
                                      disable_ue8m0_cast: bool = False,
                                      psum_layout: Optional[torch.Tensor] = None) -> torch.Tensor:
    """fgemm.transform_sf_into_required_layout with DeepGEMM's arguments; a psum_layout raises
    NotImplementedError (fgemm has no prefix-sum layout)."""
    if psum_layout is not None:
        raise NotImplementedError("deep_gemm.transform_sf_into_required_layout: psum_layout is not implemented by "
                                  "fgemm (no prefix-sum grouped layout)")
    return fgemm.transform_sf_into_required_layout(sf, mn, k, recipe, num_groups, is_sfa, disable_ue8m0_cast)


_MISSING = {
    **not_implemented_group("scales packed as UE8M0 in int32 (Blackwell's format)",
                            "ceil_to_ue8m0 pack_ue8m0_to_int unpack_ue8m0_from_int "
                            "get_mn_major_tma_aligned_packed_ue8m0_tensor "
                            "get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor"),
    **not_implemented_group("FP4 operands", "per_token_cast_to_fp4 transpose_packed_fp4 cast_back_from_fp4"),
    **not_implemented_group("per-channel or custom-dimension scaling",
                            "per_channel_cast_to_fp8 per_custom_dims_cast_to_fp8"),
    **not_implemented_group("settable or K-grouped alignment",
                            "set_mk_alignment_for_contiguous_layout get_k_alignment_for_contiguous_layout "
                            "get_theoretical_mk_alignment_for_contiguous_layout"),
}
globals().update(_MISSING)

IMPLEMENTED = [
    "ceil_div", "align", "get_tma_aligned_size", "get_mk_alignment_for_contiguous_layout",
    "get_m_alignment_for_contiguous_layout", "get_mn_major_tma_aligned_tensor", "get_col_major_tma_aligned_tensor",
    "per_token_cast_to_fp8", "per_block_cast_to_fp8", "transform_sf_into_required_layout",
]
__all__ = IMPLEMENTED + sorted(_MISSING)
