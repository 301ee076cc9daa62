"""The INT8 quantizers registered as torch.ops.fgemm.* (see _ops.py): each op with its kernel (the extension), a
shape-only (fake) version, and outputs that are constants to autograd. The outputs are allocated here, in one place
for the kernels and the fake versions, so that both give the same shapes and strides.

x and w reach these ops in a dtype the kernels read (bfloat16, float16 or float32), their last dimension
contiguous, and group_size is checked (fgemm.quantize_int8).
"""

from typing import Tuple

import torch

from . import _C
from ._buffers import BLOCK, ceil_div, empty_mn_major_scales
from ._ops import _register_constant_outputs

Tensor = torch.Tensor


def _codes(x: Tensor) -> Tensor:
    return torch.empty(x.shape, dtype=torch.int8, device=x.device)


def per_row_outputs(x: Tensor) -> Tuple[Tensor, Tensor]:
    """(codes, sf) for x [..., M, K] with one scale per row: sf [..., M]."""
    return _codes(x), torch.empty(x.shape[:-1], dtype=torch.float32, device=x.device)


def per_token_group_outputs(x: Tensor, group_size: int, mn_major_scales: bool) -> Tuple[Tensor, Tensor]:
    """(codes, sf) for x [..., M, K] with one scale per 1 x group_size block: sf [..., M, ceil(K/group_size)],
    row-major or MN-major."""
    *lead, m, k = x.shape
    groups = ceil_div(k, group_size)
    if mn_major_scales:
        return _codes(x), empty_mn_major_scales(tuple(lead), m, groups, x.device)
    return _codes(x), torch.empty((*lead, m, groups), dtype=torch.float32, device=x.device)


def per_block_outputs(w: Tensor) -> Tuple[Tensor, Tensor]:
    """(codes, sf) for w [..., N, K] with one scale per 128 x 128 block: sf [..., ceil(N/128), ceil(K/128)]."""
    *lead, n, k = w.shape
    sf = torch.empty((*lead, ceil_div(n, BLOCK), ceil_div(k, BLOCK)), dtype=torch.float32, device=w.device)
    return _codes(w), sf


# ---- the kernels, also called directly by an eager call --------------------------------------------------

def quantize_per_token(x: Tensor) -> Tuple[Tensor, Tensor]:
    codes, sf = per_row_outputs(x)
    _C.per_token_cast_to_int8(x, codes, sf)
    return codes, sf


def quantize_per_channel(w: Tensor) -> Tuple[Tensor, Tensor]:
    codes, sf = per_row_outputs(w)
    _C.per_channel_cast_to_int8(w, codes, sf)
    return codes, sf


def quantize_per_token_group(x: Tensor, group_size: int, mn_major_scales: bool) -> Tuple[Tensor, Tensor]:
    codes, sf = per_token_group_outputs(x, group_size, mn_major_scales)
    _C.per_token_group_cast_to_int8(x, codes, sf, group_size)
    return codes, sf


def quantize_per_block(w: Tensor) -> Tuple[Tensor, Tensor]:
    codes, sf = per_block_outputs(w)
    _C.per_block_cast_to_int8(w, codes, sf)
    return codes, sf


# ---- the ops ----------------------------------------------------------------------------------------------

@torch.library.custom_op("fgemm::per_token_cast_to_int8", mutates_args=())
def per_token_cast_to_int8(x: Tensor) -> Tuple[Tensor, Tensor]:
    return quantize_per_token(x)


@per_token_cast_to_int8.register_fake
def _(x):
    return per_row_outputs(x)


@torch.library.custom_op("fgemm::per_channel_cast_to_int8", mutates_args=())
def per_channel_cast_to_int8(w: Tensor) -> Tuple[Tensor, Tensor]:
    return quantize_per_channel(w)


@per_channel_cast_to_int8.register_fake
def _(w):
    return per_row_outputs(w)


@torch.library.custom_op("fgemm::per_token_group_cast_to_int8", mutates_args=())
def per_token_group_cast_to_int8(x: Tensor, group_size: int, mn_major_scales: bool) -> Tuple[Tensor, Tensor]:
    return quantize_per_token_group(x, group_size, mn_major_scales)


@per_token_group_cast_to_int8.register_fake
def _(x, group_size, mn_major_scales):
    return per_token_group_outputs(x, group_size, mn_major_scales)


@torch.library.custom_op("fgemm::per_block_cast_to_int8", mutates_args=())
def per_block_cast_to_int8(w: Tensor) -> Tuple[Tensor, Tensor]:
    return quantize_per_block(w)


@per_block_cast_to_int8.register_fake
def _(w):
    return per_block_outputs(w)


_register_constant_outputs(per_token_cast_to_int8, num_inputs=1)
_register_constant_outputs(per_channel_cast_to_int8, num_inputs=1)
_register_constant_outputs(per_token_group_cast_to_int8, num_inputs=3)
_register_constant_outputs(per_block_cast_to_int8, num_inputs=1)
