"""The tokens of a layer's input padded for the weight gradient, whose K is the tokens: the FP8 GEMMs take K in
blocks of 128 with rows aligned to 16 bytes, so the tokens are padded with zero rows, which add nothing to the
gradient."""

import torch

from .._buffers import BLOCK


def round_up(count: int) -> int:
    """count rounded up to a multiple of 128."""
    return -(-count // BLOCK) * BLOCK


def padded_token_count(tokens: int) -> int:
    """tokens rounded up to a multiple of 128, at least 128: a GEMM needs K >= 1, and an empty batch's weight
    gradient is then a product of zeros."""
    return max(round_up(tokens), BLOCK)


def pad_tokens(x: torch.Tensor) -> torch.Tensor:
    """x [T, H] followed by zero rows up to padded_token_count(T) rows (x itself where none are needed)."""
    padding = padded_token_count(x.size(0)) - x.size(0)
    return torch.nn.functional.pad(x, (0, 0, 0, padding)) if padding else x
