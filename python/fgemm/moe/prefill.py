"""The layer for many tokens (prefill): exchanges exactly the routed tokens (split sizes read on the host) and
runs the experts in the contiguous layout. Three steps: dispatch, experts, combine."""

from dataclasses import dataclass
from typing import List, Tuple

import torch
import torch.distributed as dist

from ..layout import ceil_div, get_m_alignment_for_contiguous_layout, get_mn_major_tma_aligned_tensor
from ..quantize import per_token_cast_to_fp8
from .combine import weighted_sum
from .exchange import all_to_all_rows
from .experts import QuantizedExperts
from .ffn import ffn_contiguous
from .layouts import contiguous_layout
from .routing import count_per_expert


@dataclass
class PrefillDispatch:
    """The tokens this rank's experts received, in the contiguous layout, and what the combine needs."""

    tokens: Tuple[torch.Tensor, torch.Tensor]  # FP8 [M_sum, H] and MN-major scales
    m_indices: torch.Tensor  # int32 [M_sum], the local expert of each row, -1 for padding
    row_of_received: torch.Tensor  # int64 [N]: the layout's row of each received token, in arrival order
    order: torch.Tensor  # int64 [T * k]: the (token, k) pairs in the order they were sent
    send_splits: List[int]  # pairs sent to each rank
    receive_splits: List[int]  # tokens received from each rank
    top_k: int


def dispatch_prefill(tokens: torch.Tensor, topk_ids: torch.Tensor, num_experts: int, group) -> PrefillDispatch:
    world = dist.get_world_size(group)
    local_experts = num_experts // world
    hidden = tokens.shape[1]
    device = tokens.device

    # The pairs sorted by expert are also sorted by destination rank.
    expert_of_pair = topk_ids.reshape(-1).long()
    order = torch.argsort(expert_of_pair, stable=True)
    token_of_sent = order // topk_ids.shape[1]
    counts = count_per_expert(expert_of_pair, num_experts)
    received = torch.empty_like(counts)
    all_to_all_rows(received, counts, None, None, group, "the token counts")
    received = received.view(world, local_experts)
    send_splits, receive_splits = torch.stack([counts.view(world, local_experts).sum(1), received.sum(1)]).tolist()

    codes, scales = per_token_cast_to_fp8(tokens)
    received_codes = torch.empty(sum(receive_splits), hidden, dtype=torch.uint8, device=device)
    received_scales = torch.empty(sum(receive_splits), ceil_div(hidden, 128), dtype=torch.float32, device=device)
    all_to_all_rows(received_codes, codes.view(torch.uint8)[token_of_sent], receive_splits, send_splits, group,
                    "the FP8 tokens")
    all_to_all_rows(received_scales, scales[token_of_sent], receive_splits, send_splits, group,
                    "the tokens' scales")

    row_of_received, m_indices = contiguous_layout(received, get_m_alignment_for_contiguous_layout())
    layout_codes = torch.zeros(m_indices.numel(), hidden, dtype=torch.uint8, device=device)
    layout_codes[row_of_received] = received_codes
    layout_scales = torch.zeros(m_indices.numel(), received_scales.shape[1], dtype=torch.float32, device=device)
    layout_scales[row_of_received] = received_scales
    layout = (layout_codes.view(torch.float8_e4m3fn), get_mn_major_tma_aligned_tensor(layout_scales))
    return PrefillDispatch(layout, m_indices, row_of_received, order, send_splits, receive_splits, topk_ids.shape[1])


def experts_prefill(dispatched: PrefillDispatch, experts: QuantizedExperts) -> torch.Tensor:
    return ffn_contiguous(dispatched.tokens, dispatched.m_indices, experts)


def combine_prefill(expert_outputs: torch.Tensor, dispatched: PrefillDispatch, topk_weights: torch.Tensor,
                    dtype: torch.dtype, group) -> torch.Tensor:
    """The outputs go back in the order the tokens came, and each pair's lands in its (token, k) place."""
    pairs, hidden = dispatched.order.numel(), expert_outputs.shape[1]
    returned = torch.empty(pairs, hidden, dtype=torch.bfloat16, device=expert_outputs.device)
    all_to_all_rows(returned, expert_outputs[dispatched.row_of_received], dispatched.send_splits,
                    dispatched.receive_splits, group, "the expert outputs")
    output_of_pair = torch.empty_like(returned)
    output_of_pair[dispatched.order] = returned
    return weighted_sum(output_of_pair.view(-1, dispatched.top_k, hidden), topk_weights, dtype)
