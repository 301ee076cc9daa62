"""Where a mixture of experts' tokens sit in the grouped GEMMs' contiguous layout: each expert's rows start at a
multiple of 128, so each expert's tokens are followed by padding rows up to a multiple of 128 (zeros where the
cast-transpose writes them, grouped_cast_transpose_to_fp8)."""

import functools
from typing import List

import torch

from ._tokens import round_up


class ExpertRows:
    """The padded layout of tokens sorted by expert, expert g owning m_splits[g] tokens (0 allowed).

    counts: m_splits. padded_counts: each expert's rows in the layout, m_splits[g] rounded up to a multiple of 128
    (the k-grouped weight gradient's ks). psum: int32 [G], the end of each expert's real rows, the grouped GEMMs'
    prefix-sum layout (expert g's rows run from psum[g - 1] rounded up to 128 to psum[g]; the padding rows
    between are not computed). token_starts: int32 [G], each expert's first token, from where the grouped GEMMs
    write its rows (their d_row_starts: outputs in the tokens' order, without the padding)."""

    def __init__(self, m_splits: List[int], device: torch.device):
        self.counts = list(m_splits)
        self.padded_counts = [round_up(count) for count in m_splits]
        psum, starts, start, tokens = [], [], 0, 0
        for count, padded in zip(m_splits, self.padded_counts):
            psum.append(start + count)
            starts.append(tokens)
            start, tokens = start + padded, tokens + count
        self.tokens = tokens
        self.device = device
        # One copy to the device for the four tables, from pinned memory and asynchronous: a copy from pageable
        # memory would wait for the GPU to finish all the work queued before it, and the host could no longer
        # run ahead of the GPU (each later launch's latency exposed). The copy keeps its source alive.
        groups = len(m_splits)
        tables = torch.tensor(psum + starts + self.padded_counts + self.counts, dtype=torch.int32,
                              pin_memory=device.type == "cuda").to(device, non_blocking=True)
        self.psum, self.token_starts = tables[:groups], tables[groups:2 * groups]
        self.padded_counts_tensor, self._counts_tensor = tables[2 * groups:3 * groups], tables[3 * groups:]

    @functools.cached_property
    def experts(self) -> torch.Tensor:
        """int64 [T], each token's expert (where the layer has a bias)."""
        return torch.repeat_interleave(torch.arange(len(self.counts), device=self.device), self._counts_tensor,
                                       output_size=self.tokens)
