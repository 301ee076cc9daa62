"""Comparing GEMM outputs."""

import torch


def calc_diff(x: torch.Tensor, y: torch.Tensor) -> float:
    """1 - 2 * sum(x * y) / sum(x * x + y * y), computed in float64: 0 for identical tensors, growing with
    the relative difference (about 1e-6 for rounding to BF16). Two all-zero tensors give 0."""
    x, y = x.double(), y.double()
    denominator = (x * x + y * y).sum()
    if denominator == 0:
        return 0.0
    return float(1 - 2 * (x * y).sum() / denominator)
