"""The layer for few tokens (decode), with fixed sizes so that a CUDA graph can capture all of it.

Every rank sends every other rank the same fixed block: `capacity` slots per expert of the destination, of
which the first counts[e] are real. So the all_to_alls use equal splits, the masked layout's masked_m carries
the counts, and nothing is read on the host. A (token, expert) pair beyond the capacity is dropped and
counted (a device tensor), which the layer turns into an error. Three steps: dispatch, experts, combine.
"""

from dataclasses import dataclass
from typing import Tuple

import torch
import torch.distributed as dist

from ..layout import ceil_div, get_mn_major_tma_aligned_tensor
from ..quantize import per_token_cast_to_fp8
from .combine import weighted_sum
from .exchange import all_to_all_rows
from .experts import QuantizedExperts
from .ffn import ffn_masked
from .layouts import masked_layout
from .routing import count_per_expert, position_within_expert


@dataclass
class DecodeDispatch:
    """The tokens this rank's experts received, in the masked layout, and what the combine needs."""

    tokens: Tuple[torch.Tensor, torch.Tensor]  # FP8 [E_local, W * capacity, H] and MN-major scales
    masked_m: torch.Tensor  # int32 [E_local], the real rows of each expert
    expected_m: int  # the masked GEMM's hint
    row_of_slot: torch.Tensor  # int64 [W * E_local * capacity]: each received slot's row in the layout, or a spare
    slot_of_pair: torch.Tensor  # int64 [T * k]: the slot each pair was sent in, or the spare one
    fits: torch.Tensor  # bool [T * k]: whether the pair had a slot
    dropped: torch.Tensor  # int64 scalar: the pairs without one
    top_k: int


def dispatch_decode(tokens: torch.Tensor, topk_ids: torch.Tensor, num_experts: int, capacity: int,
                    expected_m: int, group) -> DecodeDispatch:
    world = dist.get_world_size(group)
    local_experts = num_experts // world
    hidden = tokens.shape[1]
    scale_columns = ceil_div(hidden, 128)
    device = tokens.device
    slots = num_experts * capacity  # per rank, sent and received alike

    # Pair p goes to slot (expert, place among its expert's pairs); a pair past the capacity goes to a spare
    # row that is not sent.
    expert_of_pair = topk_ids.reshape(-1).long()
    token_of_pair = torch.arange(expert_of_pair.numel(), device=device) // topk_ids.shape[1]
    place = position_within_expert(expert_of_pair, num_experts)
    fits = place < capacity
    slot_of_pair = torch.where(fits, expert_of_pair * capacity + place, torch.full_like(place, slots))
    counts = count_per_expert(expert_of_pair, num_experts).clamp_(max=capacity)

    codes, scales = per_token_cast_to_fp8(tokens)
    send_codes = torch.empty(slots + 1, hidden, dtype=torch.uint8, device=device)
    send_codes.index_copy_(0, slot_of_pair, codes.view(torch.uint8)[token_of_pair])
    send_scales = torch.empty(slots + 1, scale_columns, dtype=torch.float32, device=device)
    send_scales.index_copy_(0, slot_of_pair, scales[token_of_pair])
    received = torch.empty_like(counts)
    all_to_all_rows(received, counts, None, None, group, "the token counts")
    received_codes = torch.empty(slots, hidden, dtype=torch.uint8, device=device)
    all_to_all_rows(received_codes, send_codes[:slots], None, None, group, "the FP8 tokens")
    received_scales = torch.empty(slots, scale_columns, dtype=torch.float32, device=device)
    all_to_all_rows(received_scales, send_scales[:slots], None, None, group, "the tokens' scales")

    # The received slots, [W, E_local, capacity], compacted per expert into [E_local, W * capacity].
    row_of_slot, masked_m = masked_layout(received.view(world, local_experts), capacity)
    row_of_slot = row_of_slot.flatten()
    rows = local_experts * world * capacity
    layout_codes = torch.empty(rows + 1, hidden, dtype=torch.uint8, device=device)
    layout_codes.index_copy_(0, row_of_slot, received_codes)
    layout_scales = torch.zeros(rows + 1, scale_columns, dtype=torch.float32, device=device)
    layout_scales.index_copy_(0, row_of_slot, received_scales)
    layout = (layout_codes[:rows].view(torch.float8_e4m3fn).view(local_experts, world * capacity, hidden),
              get_mn_major_tma_aligned_tensor(layout_scales[:rows].view(local_experts, world * capacity,
                                                                        scale_columns)))
    return DecodeDispatch(layout, masked_m, expected_m, row_of_slot, slot_of_pair, fits, (~fits).sum(),
                          topk_ids.shape[1])


def experts_decode(dispatched: DecodeDispatch, experts: QuantizedExperts) -> torch.Tensor:
    return ffn_masked(dispatched.tokens, dispatched.masked_m, dispatched.expected_m, experts)


def combine_decode(expert_outputs: torch.Tensor, dispatched: DecodeDispatch, topk_weights: torch.Tensor,
                   dtype: torch.dtype, group) -> torch.Tensor:
    """Every slot sends back a row (a spare slot any row, never read), and each pair reads its own; a dropped
    pair adds nothing."""
    hidden = expert_outputs.shape[-1]
    outputs = expert_outputs.reshape(-1, hidden)
    slots = dispatched.row_of_slot.numel()
    returned = torch.empty(slots, hidden, dtype=torch.bfloat16, device=outputs.device)
    all_to_all_rows(returned, outputs[dispatched.row_of_slot.clamp(max=outputs.shape[0] - 1)], None, None, group,
                    "the expert outputs")
    output_of_pair = returned[dispatched.slot_of_pair.clamp(max=slots - 1)]
    # A dropped pair read another pair's row: zero it (a zero weight would still pass on an infinity or NaN).
    output_of_pair.masked_fill_(~dispatched.fits.unsqueeze(1), 0)
    return weighted_sum(output_of_pair.view(-1, dispatched.top_k, hidden), topk_weights, dtype)
