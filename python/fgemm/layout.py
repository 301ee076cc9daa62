"""Sizes and layouts the kernels expect: TMA alignment and the MN-major layout of the activation scales."""

import torch

from . import _C

# TMA (the GPU's tensor memory accelerator) needs every stride but the innermost to be a multiple of 16 bytes.
_TMA_ALIGNMENT_BYTES = 16


def ceil_div(x: int, y: int) -> int:
    """x / y rounded up, for non-negative x and positive y."""
    return (x + y - 1) // y


def get_tma_aligned_size(x: int, element_size: int) -> int:
    """x rounded up so that x elements of element_size bytes span a multiple of 16 bytes."""
    if element_size <= 0 or _TMA_ALIGNMENT_BYTES % element_size != 0:
        raise ValueError(f"fgemm.get_tma_aligned_size: argument 'element_size' must divide 16, got {element_size}")
    alignment = _TMA_ALIGNMENT_BYTES // element_size
    return ceil_div(x, alignment) * alignment


def _is_mn_major_tma_aligned(sf: torch.Tensor, aligned_m: int) -> bool:
    m, k_blocks = sf.shape[-2:]
    strides = (1, aligned_m) if sf.dim() == 2 else (aligned_m * k_blocks, 1, aligned_m)
    return sf.stride() == strides


def empty_mn_major_scales(lead: tuple, m: int, k_blocks: int, device) -> torch.Tensor:
    """An uninitialised float32 tensor [*lead, m, k_blocks] (lead: () or (G,)) in the MN-major, TMA-aligned
    layout; the padding rows of each column lie outside the view."""
    aligned_m = get_tma_aligned_size(m, 4)
    storage = torch.empty((*lead, k_blocks, aligned_m), dtype=torch.float32, device=device)
    return storage.transpose(-1, -2)[..., :m, :]


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
    m, k_blocks = sf.shape[-2:]
    if _is_mn_major_tma_aligned(sf, get_tma_aligned_size(m, sf.element_size())):
        return sf
    aligned = empty_mn_major_scales(tuple(sf.shape[:-2]), m, k_blocks, sf.device)
    _C.copy_scales(sf, aligned)
    return aligned


# DeepGEMM's earlier name for the same layout.
get_col_major_tma_aligned_tensor = get_mn_major_tma_aligned_tensor
