"""The experts' weights: BF16 master copies and the FP8 copies (128x128 blocks) that the GEMMs read."""

from typing import NamedTuple

import torch

from ..quantize import per_block_cast_to_fp8


class QuantizedExperts(NamedTuple):
    """FP8 codes and their per-128x128-block float32 scales of G experts' two projections."""

    gate_up: torch.Tensor  # [G, 2 * intermediate, hidden] float8_e4m3fn
    gate_up_scales: torch.Tensor  # [G, ceil(2 * intermediate / 128), ceil(hidden / 128)]
    down: torch.Tensor  # [G, hidden, intermediate] float8_e4m3fn
    down_scales: torch.Tensor  # [G, ceil(hidden / 128), ceil(intermediate / 128)]


def quantize_experts(gate_up: torch.Tensor, down: torch.Tensor) -> QuantizedExperts:
    """Quantizes [G, 2I, H] gate/up and [G, H, I] down projections per 128x128 block."""
    gate_up_fp8, gate_up_scales = per_block_cast_to_fp8(gate_up.detach())
    down_fp8, down_scales = per_block_cast_to_fp8(down.detach())
    return QuantizedExperts(gate_up_fp8, gate_up_scales, down_fp8, down_scales)


def check_expert_weights(gate_up: torch.Tensor, down: torch.Tensor, op: str) -> None:
    """Raises TypeError or ValueError unless gate_up is [G, 2I, H] and down [G, H, I], both floating point."""
    for name, weight in (("gate_up", gate_up), ("down", down)):
        if not isinstance(weight, torch.Tensor) or not weight.is_floating_point():
            raise TypeError(f"{op}: argument '{name}' expected a floating-point torch.Tensor, got "
                            f"{getattr(weight, 'dtype', type(weight).__name__)}")
        if weight.dim() != 3:
            raise ValueError(f"{op}: argument '{name}' expected 3 dimensions, got shape {list(weight.shape)}")
    experts, two_intermediate, hidden = gate_up.shape
    if two_intermediate % 2:
        raise ValueError(f"{op}: argument 'gate_up' expected shape [experts, 2 * intermediate, hidden], got an odd "
                         f"second dimension {two_intermediate}")
    expected = [experts, hidden, two_intermediate // 2]
    if list(down.shape) != expected:
        raise ValueError(f"{op}: argument 'down' expected shape {expected} ([experts, hidden, intermediate]), got "
                         f"{list(down.shape)}")
