"""Sizes and layouts the kernels expect: TMA alignment and the MN-major layout of the activation scales."""

from typing import Optional, Sequence

import torch

from . import _C, _ops
from ._buffers import ceil_div, get_tma_aligned_size
from .eager import runs_eagerly


def get_m_alignment_for_contiguous_layout() -> int:
    """Each group's rows in the m-grouped contiguous layout start at a multiple of this (128)."""
    return _C.get_m_alignment_for_contiguous_layout()


def _is_mn_major_tma_aligned(sf: torch.Tensor, aligned_m: int) -> bool:
    m, k_blocks = sf.shape[-2:]
    strides = (1, aligned_m) if sf.dim() == 2 else (aligned_m * k_blocks, 1, aligned_m)
    return sf.stride() == strides


def get_mn_major_tma_aligned_tensor(sf: torch.Tensor) -> torch.Tensor:
    """The float32 scales sf [M, KB] (or [G, M, KB]) in the MN-major, TMA-aligned layout: column-major, each
    column padded to aligned_M = get_tma_aligned_size(M, 4) elements, so the strides are (1, aligned_M) (or
    (aligned_M * KB, 1, aligned_M)). Returns sf itself when it already has that layout, else a copy made by
    one kernel (on the GPU for CUDA tensors, on the current torch stream; on the CPU for CPU tensors).

    Both layouts of sfa are accepted by the GEMMs, but on the GPU this one is the fast one: the TMA loads a
    tile's scales with its rows of A, where row-major scales are copied one by one, which costs the large
    GEMMs about a tenth of their speed. It is also what DeepGEMM requires. The quantizers can write it
    directly (mn_major_scales=True).
    """
    if not isinstance(sf, torch.Tensor):
        raise TypeError(f"fgemm.get_mn_major_tma_aligned_tensor: argument 'sf' expected a torch.Tensor, "
                        f"got {type(sf).__name__}")
    if sf.dim() not in (2, 3):
        raise ValueError(f"fgemm.get_mn_major_tma_aligned_tensor: argument 'sf' expected shape [M, KB] or "
                         f"[G, M, KB], got {list(sf.shape)}")
    if _is_mn_major_tma_aligned(sf, get_tma_aligned_size(sf.shape[-2], sf.element_size())):
        return sf
    if runs_eagerly(sf):
        return _ops.copy_to_mn_major(sf)
    return _ops.to_mn_major_tma_aligned(sf)


# DeepGEMM's earlier name for the same layout.
get_col_major_tma_aligned_tensor = get_mn_major_tma_aligned_tensor


def _granularity(recipe, is_sfa, fn: str) -> tuple:
    """(scale rows per MN block, K per block) from DeepGEMM's recipe arguments: a recipe (MN of A, MN of B,
    K) with is_sfa saying which operand sf belongs to, or a pair (MN, K) without is_sfa."""
    if not isinstance(recipe, (tuple, list)) or not all(isinstance(x, int) for x in recipe):
        raise TypeError(f"{fn}: argument 'recipe' expected a tuple of ints, got {recipe!r}")
    if len(recipe) == 3:
        if not isinstance(is_sfa, bool):
            raise TypeError(f"{fn}: argument 'is_sfa' expected True or False with a recipe of three values, "
                            f"got {is_sfa!r}")
        return (recipe[0] if is_sfa else recipe[1]), recipe[2]
    if len(recipe) == 2:
        if is_sfa is not None:
            raise ValueError(f"{fn}: argument 'is_sfa' expected None with a recipe of two values (MN, K), "
                             f"got {is_sfa!r}")
        return tuple(recipe)
    raise ValueError(f"{fn}: argument 'recipe' expected (MN of A, MN of B, K) or (MN, K), got {recipe!r}")


def transform_sf_into_required_layout(sf: torch.Tensor, mn: int, k: int, recipe: Sequence[int],
                                      num_groups: Optional[int] = None, is_sfa: Optional[bool] = None,
                                      disable_ue8m0_cast: bool = False) -> torch.Tensor:
    """DeepGEMM's preparation of float32 scales for its GEMMs, for the recipe fgemm implements: per-token
    scales of A (1 x 128: recipe (1, 128, 128) with is_sfa=True, or (1, 128)) come back MN-major and
    TMA-aligned (get_mn_major_tma_aligned_tensor), per-block scales of B (128 x 128: is_sfa=False, or
    (128, 128)) come back as they are. sf is [ceil(mn / MN), ceil(k / 128)], with a leading [num_groups]
    where num_groups is given. disable_ue8m0_cast may be True or False: on Hopper neither casts the scales
    (DeepGEMM packs them into UE8M0 on Blackwell only). Another recipe or a wrong shape is a ValueError, scales
    of another dtype (such as UE8M0 packed in int32) a TypeError."""
    fn = "fgemm.transform_sf_into_required_layout"
    gran_mn, gran_k = _granularity(recipe, is_sfa, fn)
    if (gran_mn, gran_k) not in ((1, 128), (128, 128)):
        raise ValueError(f"{fn}: argument 'recipe' expected scale blocks of 1 x 128 (A) or 128 x 128 (B), the "
                         f"recipe fgemm implements; got {gran_mn} x {gran_k}")
    for name, value in (("mn", mn), ("k", k)):
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"{fn}: argument '{name}' expected a non-negative int, got {value!r}")
    if not isinstance(disable_ue8m0_cast, bool):
        raise TypeError(f"{fn}: argument 'disable_ue8m0_cast' expected True or False, got {disable_ue8m0_cast!r}")
    if not isinstance(sf, torch.Tensor):
        raise TypeError(f"{fn}: argument 'sf' expected a torch.Tensor, got {type(sf).__name__}")
    if sf.dtype != torch.float32:
        raise TypeError(f"{fn}: argument 'sf' expected float32 scales, got {sf.dtype}")
    if num_groups is not None and (not isinstance(num_groups, int) or num_groups < 1):
        raise ValueError(f"{fn}: argument 'num_groups' expected None or a positive int, got {num_groups!r}")
    expected, dims = [ceil_div(mn, gran_mn), ceil_div(k, gran_k)], f"[ceil(mn / {gran_mn}), ceil(k / 128)]"
    if num_groups is not None:
        expected, dims = [num_groups, *expected], "[num_groups] + " + dims
    if list(sf.shape) != expected:
        raise ValueError(f"{fn}: argument 'sf' expected shape {expected} ({dims}), got {list(sf.shape)}")
    return get_mn_major_tma_aligned_tensor(sf) if gran_mn == 1 else sf
