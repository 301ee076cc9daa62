"""The output tensors of the quantizers and of the layout helper, allocated in one place for the kernels and
for their shape-only (fake) versions, so that both give the same shapes and strides."""

import torch

# TMA (the GPU's tensor memory accelerator) needs every stride but the innermost to be a multiple of 16 bytes.
_TMA_ALIGNMENT_BYTES = 16
# Columns of K (and rows of N) per scale block.
BLOCK = 128


def ceil_div(x: int, y: int) -> int:
    """x / y rounded up, for non-negative x and positive y."""
    return (x + y - 1) // y


def get_tma_aligned_size(x: int, element_size: int) -> int:
    """x rounded up so that x elements of element_size bytes span a multiple of 16 bytes."""
    if element_size <= 0 or _TMA_ALIGNMENT_BYTES % element_size != 0:
        raise ValueError(f"fgemm.get_tma_aligned_size: argument 'element_size' must divide 16, got {element_size}")
    alignment = _TMA_ALIGNMENT_BYTES // element_size
    return ceil_div(x, alignment) * alignment


def empty_mn_major_scales(lead: tuple, m: int, k_blocks: int, device) -> torch.Tensor:
    """An uninitialised float32 tensor [*lead, m, k_blocks] (lead: () or (G,)) in the MN-major, TMA-aligned
    layout; the padding rows of each column lie outside the view."""
    aligned_m = get_tma_aligned_size(m, 4)
    storage = torch.empty((*lead, k_blocks, aligned_m), dtype=torch.float32, device=device)
    return storage.transpose(-1, -2)[..., :m, :]


def _empty_scales(lead: tuple, m: int, k_blocks: int, mn_major: bool, device) -> torch.Tensor:
    """An uninitialised float32 tensor [*lead, m, k_blocks], row-major or MN-major and TMA-aligned."""
    if mn_major:
        return empty_mn_major_scales(lead, m, k_blocks, device)
    return torch.empty((*lead, m, k_blocks), dtype=torch.float32, device=device)


def per_token_outputs(x: torch.Tensor, mn_major_scales: bool):
    """(x_fp8, sf) for per_token_cast_to_fp8 of x [..., M, K]: sf [..., M, ceil(K/128)], row-major or
    MN-major."""
    *lead, m, k = x.shape
    x_fp8 = torch.empty(x.shape, dtype=torch.float8_e4m3fn, device=x.device)
    return x_fp8, _empty_scales(tuple(lead), m, ceil_div(k, BLOCK), mn_major_scales, x.device)


def cast_transpose_outputs(x: torch.Tensor, mn_major_scales: bool):
    """(x_fp8, sf, xt_fp8, sft) for cast_transpose_to_fp8 of x [M, K]: those of per_token_cast_to_fp8 of x and of
    its transpose, xt_fp8 [K, M] contiguous and sft [K, ceil(M/128)], the scales row-major or MN-major."""
    m, k = x.shape
    xt_fp8 = torch.empty((k, m), dtype=torch.float8_e4m3fn, device=x.device)
    return (*per_token_outputs(x, mn_major_scales), xt_fp8,
            _empty_scales((), k, ceil_div(m, BLOCK), mn_major_scales, x.device))


def grouped_cast_transpose_outputs(x: torch.Tensor, ks, mn_major_scales: bool):
    """(x_fp8, sf, xt_fp8, sft) for grouped_cast_transpose_to_fp8 of x [sum(ks), H], each expert's rows padded to
    a multiple of 128, P rows in all: x_fp8 [P, H], sf [P, ceil(H/128)], xt_fp8 flat [P * H], sft [H, P/128], the
    scales row-major or MN-major."""
    rows, h = sum(ceil_div(k, BLOCK) * BLOCK for k in ks), x.size(1)
    x_fp8 = torch.empty(rows, h, dtype=torch.float8_e4m3fn, device=x.device)
    xt_fp8 = torch.empty(rows * h, dtype=torch.float8_e4m3fn, device=x.device)
    return (x_fp8, _empty_scales((), rows, ceil_div(h, BLOCK), mn_major_scales, x.device), xt_fp8,
            _empty_scales((), h, rows // BLOCK, mn_major_scales, x.device))


def per_block_cast_transpose_outputs(x: torch.Tensor):
    """(x_fp8, sf, xt_fp8, sft) for per_block_cast_transpose_to_fp8 of x [..., N, K]: those of per_block_cast_to_fp8
    of x and of its matrices transposed, all contiguous."""
    *lead, n, k = x.shape
    xt_fp8 = torch.empty((*lead, k, n), dtype=torch.float8_e4m3fn, device=x.device)
    sft = torch.empty((*lead, ceil_div(k, BLOCK), ceil_div(n, BLOCK)), dtype=torch.float32, device=x.device)
    return (*per_block_outputs(x), xt_fp8, sft)


def per_block_outputs(w: torch.Tensor):
    """(w_fp8, sf) for per_block_cast_to_fp8 of w [..., N, K]: sf [..., ceil(N/128), ceil(K/128)]."""
    *lead, n, k = w.shape
    w_fp8 = torch.empty(w.shape, dtype=torch.float8_e4m3fn, device=w.device)
    sf = torch.empty((*lead, ceil_div(n, BLOCK), ceil_div(k, BLOCK)), dtype=torch.float32, device=w.device)
    return w_fp8, sf
