"""The INT8 quantizers' arithmetic (include/fgemm/quantize_int8.hpp) as torch operations, and bitwise comparisons:
what the CPU and GPU tests and the benchmark hold fgemm's INT8 quantizers to. Inputs come from
quantize_reference.random_input."""

import torch

from quantize_reference import BLOCK

AMAX_FLOOR = 1e-10  # clamped into a float32 tensor it is fl(1e-10)
INVERSE_MAX_CODE = 1.0 / 127.0  # a Python float; multiplied into a float32 tensor it is fl(1/127)


def _pad(x, rows_multiple, cols_multiple):
    """x with its last dimension padded with zeros to a multiple of cols_multiple, its second last to
    rows_multiple. Zeros change no block's largest magnitude."""
    rows, cols = x.shape[-2:]
    return torch.nn.functional.pad(x, (0, -cols % cols_multiple, 0, -rows % rows_multiple))


def scale_and_inverse(amax):
    """The scales of blocks whose largest magnitudes are amax (float32), and what their elements are multiplied by."""
    amax = amax.clamp(min=AMAX_FLOOR)
    return amax * INVERSE_MAX_CODE, amax.reciprocal() * 127.0


def codes_of(x, inverse):
    """round-half-to-even(x * inverse) as int8, a NaN product (from a NaN or an infinity) made 0."""
    scaled = torch.round(x * inverse)
    return torch.where(scaled.isnan(), 0.0, scaled).to(torch.int8)


def per_row(x):
    """(codes, scales) of x [..., M, K] with one scale per row (per token, or per output channel)."""
    x = x.float()
    amax = x.abs().amax(dim=-1) if x.shape[-1] > 0 else x.new_zeros(x.shape[:-1])  # an empty row's maximum is 0
    scale, inverse = scale_and_inverse(amax)
    return codes_of(x, inverse.unsqueeze(-1)), scale


def per_token_group(x, group_size=128):
    """(codes, scales) of x [..., M, K] with one scale per 1 x group_size block."""
    k = x.shape[-1]
    blocks = _pad(x.float(), 1, group_size).unflatten(-1, (-1, group_size))  # [..., M, KB, group_size]
    scale, inverse = scale_and_inverse(blocks.abs().amax(dim=-1))
    return codes_of(blocks, inverse.unsqueeze(-1)).flatten(-2)[..., :k], scale


def per_block(w):
    """(codes, scales) of w [..., N, K] with one scale per 128 x 128 block."""
    n, k = w.shape[-2:]
    # blocks [..., NB, 128, KB, 128]
    blocks = _pad(w.float(), BLOCK, BLOCK).unflatten(-1, (-1, BLOCK)).unflatten(-3, (-1, BLOCK))
    scale, inverse = scale_and_inverse(blocks.abs().amax(dim=(-3, -1), keepdim=True))
    codes = codes_of(blocks, inverse).flatten(-2).flatten(-3, -2)[..., :n, :k]
    return codes, scale.squeeze(-1).squeeze(-2)


def assert_same_codes(actual, expected, what=""):
    """int8 codes bit for bit."""
    assert actual.dtype == torch.int8 and actual.shape == expected.shape, what
    differ = actual != expected
    assert not differ.any(), f"{int(differ.sum())} codes differ {what}, first at {differ.nonzero()[0].tolist()}"
