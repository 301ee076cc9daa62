"""The FP8 codes of a layer's weight for a step, and those codes kept for the micro-batches of one optimizer step
(is_first_microbatch, as TransformerEngine's layers take it): with gradient accumulation the weight does not change
between them, and for a mixture of experts at a few thousand tokens each its quantization is the largest of the
step's quantizers."""

from typing import Optional, Tuple

import torch

from ..quantize import per_block_cast_to_fp8, per_block_cast_transpose_to_fp8

QuantizedWeight = Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]


class WeightCache:
    """The codes and scales of a weight both ways (per_block_cast_transpose_to_fp8), and the weight's version
    when they were taken."""

    def __init__(self):
        self._weight: Optional[torch.Tensor] = None
        self._version = -1
        self._quantized: Optional[QuantizedWeight] = None

    def quantized(self, weight: torch.Tensor, is_first_microbatch, layer: str) -> Optional[QuantizedWeight]:
        """None: the cache is not used, the layer quantizes its weight itself. True: the weight quantized now, and
        kept. False: the codes kept by the last call with True, the weight unchanged since (an in-place update,
        such as an optimizer step, bumps its version; a write through .data does not, and is not seen)."""
        if is_first_microbatch is None:
            return None
        if not isinstance(is_first_microbatch, bool):
            raise TypeError(f"fgemm.nn.{layer}: argument 'is_first_microbatch' expected a bool or None, got "
                            f"{type(is_first_microbatch).__name__}")
        if is_first_microbatch:
            with torch.no_grad():
                self._quantized = per_block_cast_transpose_to_fp8(weight)
            self._weight, self._version = weight, weight._version
            return self._quantized
        if self._quantized is None or self._weight is not weight:
            raise ValueError(f"fgemm.nn.{layer}: argument 'is_first_microbatch' is False, but no earlier call "
                             f"quantized the weight: pass True on the first micro-batch of each step")
        if weight._version != self._version:
            raise ValueError(f"fgemm.nn.{layer}: argument 'is_first_microbatch' is False, but the weight changed "
                             f"since the micro-batch that quantized it: pass True on the first micro-batch after "
                             f"each optimizer step")
        return self._quantized


def weight_for_step(weight: torch.Tensor, kept: Optional[QuantizedWeight], input_gradient: bool):
    """(w_fp8, w_scales, wt_fp8, wt_scales) of a step: the codes kept from an earlier micro-batch; else W quantized
    both ways in one read where the input gradient will need W transposed (a 128x128 block of W^T is one of W's,
    transposed: the same codes and scale, not quantized a second time); else W alone, and None for W^T."""
    if kept is not None:
        return kept
    if input_gradient:
        return per_block_cast_transpose_to_fp8(weight)
    return (*per_block_cast_to_fp8(weight), None, None)
