"""The layer for many tokens (prefill): exchanges exactly the routed tokens (split sizes read on the host) and
runs the experts in the contiguous layout."""

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


def prefill_forward(tokens: torch.Tensor, topk_ids: torch.Tensor, topk_weights: torch.Tensor,
                    experts: QuantizedExperts, num_experts: int, group) -> torch.Tensor:
    world = dist.get_world_size(group)
    local_experts = num_experts // world
    num_tokens, top_k = topk_ids.shape
    hidden = tokens.shape[1]
    device = tokens.device

    # Dispatch. The pairs sorted by expert are also sorted by destination rank.
    expert_of_pair = topk_ids.reshape(-1).long()
    order = torch.argsort(expert_of_pair, stable=True)
    token_of_sent = order // top_k
    counts = count_per_expert(expert_of_pair, num_experts)
    received = torch.empty_like(counts)
    all_to_all_rows(received, counts, None, None, group, "the token counts")
    received = received.view(world, local_experts)
    counts_and_received = torch.stack([counts.view(world, local_experts).sum(1), received.sum(1)]).tolist()
    send_splits, receive_splits = counts_and_received

    codes, scales = per_token_cast_to_fp8(tokens)
    received_codes = torch.empty(sum(receive_splits), hidden, dtype=torch.uint8, device=device)
    received_scales = torch.empty(sum(receive_splits), ceil_div(hidden, 128), dtype=torch.float32, device=device)
    all_to_all_rows(received_codes, codes.view(torch.uint8)[token_of_sent], receive_splits, send_splits, group,
                    "the FP8 tokens")
    all_to_all_rows(received_scales, scales[token_of_sent], receive_splits, send_splits, group,
                    "the tokens' scales")

    # Experts.
    row_of_received, m_indices = contiguous_layout(received, get_m_alignment_for_contiguous_layout())
    layout_codes = torch.zeros(m_indices.numel(), hidden, dtype=torch.uint8, device=device)
    layout_codes[row_of_received] = received_codes
    layout_scales = torch.zeros(m_indices.numel(), received_scales.shape[1], dtype=torch.float32, device=device)
    layout_scales[row_of_received] = received_scales
    outputs = ffn_contiguous((layout_codes.view(torch.float8_e4m3fn), get_mn_major_tma_aligned_tensor(layout_scales)),
                             m_indices, experts)

    # Combine: the outputs go back in the order they came, and each pair's lands in its (token, k) place.
    returned = torch.empty(expert_of_pair.numel(), hidden, dtype=torch.bfloat16, device=device)
    all_to_all_rows(returned, outputs[row_of_received], send_splits, receive_splits, group, "the expert outputs")
    output_of_pair = torch.empty_like(returned)
    output_of_pair[order] = returned
    return weighted_sum(output_of_pair.view(num_tokens, top_k, hidden), topk_weights, tokens.dtype)
