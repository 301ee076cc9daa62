"""The last step of the layer: each token's expert outputs, weighted by the router and summed."""

import torch


def weighted_sum(expert_outputs: torch.Tensor, topk_weights: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """[T, H] in `dtype`: sum over k of topk_weights[t, k] * expert_outputs[t, k], in FP32 and in the order of k
    (the reference and the layer call this same function on the same shapes, so they round alike)."""
    return (expert_outputs.float() * topk_weights.float().unsqueeze(-1)).sum(1).to(dtype)
