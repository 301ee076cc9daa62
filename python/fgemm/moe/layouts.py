"""Where received tokens go in the grouped GEMMs' layouts.

Received rows arrive ordered by source rank, then by local expert (each rank sorts its pairs by expert, and
a rank's experts are consecutive ids). The grouped GEMMs want them ordered by expert: contiguous segments
padded to the layout's alignment (prefill), or a fixed [experts, rows] block per expert (decode).
"""

from typing import Tuple

import torch


def _exclusive_cumsum(x: torch.Tensor, dim: int) -> torch.Tensor:
    return x.cumsum(dim) - x


def contiguous_layout(received: torch.Tensor, alignment: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """For received [W, E_local] counts (rows from rank s for local expert e): (row_of_received int64 [N], the
    row of the contiguous layout that each received row goes to; m_indices int32 [M_sum], each row's local
    expert or -1 for the padding that makes every expert's segment a multiple of `alignment` rows). Reads the
    total size on the host."""
    device = received.device
    sources, local_experts = received.shape
    per_expert = received.sum(0)
    padded = (per_expert + alignment - 1) // alignment * alignment
    segment_start = _exclusive_cumsum(padded, 0)
    expert_of_received = torch.arange(local_experts, device=device).repeat(sources).repeat_interleave(
        received.flatten())
    # A stable sort keeps each expert's rows in source order: rank 0's tokens first, as the reference has them.
    order = torch.argsort(expert_of_received, stable=True)
    sorted_experts = expert_of_received[order]
    place_in_expert = torch.arange(order.numel(), device=device) - _exclusive_cumsum(per_expert, 0)[sorted_experts]
    row_of_received = torch.empty_like(order)
    row_of_received[order] = segment_start[sorted_experts] + place_in_expert
    m_indices = torch.full((int(padded.sum()),), -1, dtype=torch.int32, device=device)
    m_indices[row_of_received] = expert_of_received.to(torch.int32)
    return row_of_received, m_indices


def masked_layout(received: torch.Tensor, capacity: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """For received [W, E_local] counts, each within `capacity` (the fixed slots per source and expert): (the
    masked layout's row of each received slot, int64 [W, E_local, capacity], whose layout is
    [E_local, W * capacity] flattened; slots past the count point at the spare row E_local * W * capacity;
    masked_m int32 [E_local], the real rows of each expert). Fixed shapes, nothing read on the host."""
    device = received.device
    sources, local_experts = received.shape
    rows_per_expert = sources * capacity
    earlier_sources = _exclusive_cumsum(received, 0)
    slot = torch.arange(capacity, device=device)
    expert_start = (torch.arange(local_experts, device=device) * rows_per_expert).view(1, local_experts, 1)
    row = expert_start + earlier_sources.unsqueeze(-1) + slot
    spare = local_experts * rows_per_expert
    row_of_slot = torch.where(slot < received.unsqueeze(-1), row, torch.full_like(row, spare))
    return row_of_slot, received.sum(0).to(torch.int32)
