"""Where a mixture of experts' tokens sit in the grouped GEMMs' contiguous layout: each expert's rows start at a
multiple of 128, so each expert's tokens are followed by padding rows up to a multiple of 128 (zeros where the
cast-transpose writes them, grouped_cast_transpose_to_fp8)."""

from typing import List

import torch

from ._tokens import round_up


class ExpertRows:
    """The padded layout of tokens sorted by expert, expert g owning m_splits[g] tokens (0 allowed).

    counts: m_splits. padded_counts: each expert's rows in the layout, m_splits[g] rounded up to a multiple of 128 (the
    k-grouped weight gradient's ks). psum: int32 [G], the end of each expert's real rows, the grouped GEMMs'
    prefix-sum layout (expert g's rows run from psum[g - 1] rounded up to 128 to psum[g]; the padding rows
    between are not computed). rows: int64 [T], each token's row in the layout. experts: int64 [T], each
    token's expert."""

    def __init__(self, m_splits: List[int], device: torch.device):
        self.counts = list(m_splits)
        self.padded_counts = [round_up(count) for count in m_splits]
        # Expert g's tokens move down by `shift`: the padding of the experts before it.
        psum, shifts, start, tokens = [], [], 0, 0
        for count, padded in zip(m_splits, self.padded_counts):
            psum.append(start + count)
            shifts.append(start - tokens)
            start, tokens = start + padded, tokens + count
        self.padded_total = start
        counts = torch.tensor(m_splits, device=device)
        self.experts = torch.repeat_interleave(torch.arange(len(m_splits), device=device), counts, output_size=tokens)
        self.rows = torch.arange(tokens, device=device) + torch.tensor(shifts, device=device)[self.experts]
        self.psum = torch.tensor(psum, dtype=torch.int32, device=device)
        self.padded_counts_tensor = torch.tensor(self.padded_counts, dtype=torch.int32, device=device)

    def unpad(self, padded: torch.Tensor) -> torch.Tensor:
        """The tokens' rows of `padded` [padded_total, H], in the tokens' order: [T, H]."""
        return padded.index_select(0, self.rows)
