"""ExpertParallelMoE: the mixture-of-experts layer with its experts sharded over a process group."""

import math
from typing import Optional, Union

import torch
import torch.distributed as dist
from torch import nn

from .decode import DecodeDispatch, combine_decode, dispatch_decode, experts_decode
from .experts import check_expert_weights, quantize_experts
from .prefill import PrefillDispatch, combine_prefill, dispatch_prefill, experts_prefill
from .routing import check_routing, is_capturing

_OP = "fgemm.moe.ExpertParallelMoE"


def _check_positive(value, name: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{_OP}: argument '{name}' expected an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{_OP}: argument '{name}' expected a positive int, got {value}")


class ExpertParallelMoE(nn.Module):
    """DeepSeek-V3's routed experts, sharded over the ranks of `group` (default: the default process group).

    Rank r of W owns experts [r * E / W, (r + 1) * E / W). Each expert is down(silu(gate(x)) * up(x)) with its
    weights kept as BF16 masters (the parameters `gate_up` [E/W, 2 * intermediate, hidden], [gate | up], and
    `down` [E/W, hidden, intermediate]) and as FP8 copies in 128x128 blocks, which the GEMMs read. The FP8
    copies are made at construction; call quantize_weights() after changing or moving the parameters.

    Every rank of the group constructs the layer at the same time, with the same arguments (checked).
    forward(tokens [T, hidden], topk_ids [T, k] int32/int64, topk_weights [T, k]) returns [T, hidden] in the
    tokens' dtype: every rank calls it (with its own tokens, T may differ between ranks) at the same time.
    - mode="prefill": the tokens go out in FP8 with their per-token scales, exactly as many as were routed
      (split sizes read on the host), and the experts run in the contiguous layout.
    - mode="decode": fixed sizes, nothing read on the host, so a CUDA graph can capture the whole layer with
      its communication. Needs `decode_max_tokens` (the largest T) at construction; each rank sends each expert
      at most `max_tokens_per_expert` pairs (default decode_max_tokens, which no routing with distinct top-k
      experts exceeds); the experts run in the masked layout. A pair beyond that capacity is dropped: outside
      a capture the call then raises RuntimeError; under a capture the count accumulates in `dropped_pairs`,
      which check_capacity() reads.
    For inference: the GEMMs take quantized copies, so no gradient reaches the parameters.
    """

    def __init__(self, num_experts: int, hidden: int, intermediate: int, *, group: Optional[dist.ProcessGroup] = None,
                 decode_max_tokens: Optional[int] = None, max_tokens_per_expert: Optional[int] = None,
                 device=None, dtype: torch.dtype = torch.bfloat16):
        super().__init__()
        for name, value in (("num_experts", num_experts), ("hidden", hidden), ("intermediate", intermediate)):
            _check_positive(value, name)
        if not dist.is_initialized():
            raise RuntimeError(f"{_OP}: torch.distributed is not initialized (call init_process_group first)")
        self.group = group
        self.world_size = dist.get_world_size(group)
        self.rank = dist.get_rank(group)
        if num_experts % self.world_size:
            raise ValueError(f"{_OP}: argument 'num_experts' expected a multiple of the group's {self.world_size} "
                             f"ranks, got {num_experts}")
        self.num_experts = num_experts
        self.local_experts = num_experts // self.world_size
        self.hidden = hidden
        self.intermediate = intermediate
        self.set_decode_capacity(decode_max_tokens, max_tokens_per_expert)
        self.gate_up = nn.Parameter(torch.randn(self.local_experts, 2 * intermediate, hidden, device=device,
                                                dtype=dtype) / math.sqrt(hidden))
        self.down = nn.Parameter(torch.randn(self.local_experts, hidden, intermediate, device=device,
                                             dtype=dtype) / math.sqrt(intermediate))
        self.register_buffer("dropped_pairs", torch.zeros((), dtype=torch.int64, device=device), persistent=False)
        self.quantize_weights()

    def set_decode_capacity(self, decode_max_tokens: Optional[int],
                            max_tokens_per_expert: Optional[int] = None) -> None:
        """Sets the sizes of decode's fixed buffers: at most decode_max_tokens tokens per rank and call (None:
        no decode), at most max_tokens_per_expert pairs from one rank to one expert (default decode_max_tokens).
        A collective call, as construction is: every rank, the same values. A CUDA graph captured before keeps
        the sizes it was captured with."""
        if decode_max_tokens is not None:
            _check_positive(decode_max_tokens, "decode_max_tokens")
        if max_tokens_per_expert is not None:
            _check_positive(max_tokens_per_expert, "max_tokens_per_expert")
        self.decode_max_tokens = decode_max_tokens
        self.max_tokens_per_expert = max_tokens_per_expert or decode_max_tokens
        self._check_ranks_agree()

    def _check_ranks_agree(self) -> None:
        # Decode's all_to_alls send fixed blocks whose sizes follow from these: ranks that disagree would pair
        # mismatched buffers. (Gathered here, which makes construction a collective call.)
        sizes = (self.num_experts, self.hidden, self.intermediate, self.decode_max_tokens, self.max_tokens_per_expert)
        every_rank = [None] * self.world_size
        dist.all_gather_object(every_rank, sizes, group=self.group)
        if any(other != sizes for other in every_rank):
            raise ValueError(f"{_OP}: every rank must give the layer the same (num_experts, hidden, intermediate, "
                             f"decode_max_tokens, max_tokens_per_expert); the ranks have {every_rank}")

    @property
    def first_expert(self) -> int:
        """The global id of this rank's first expert."""
        return self.rank * self.local_experts

    def quantize_weights(self) -> None:
        """Makes the FP8 copies (128x128 blocks) of the BF16 masters, which forward reads."""
        self.quantized_experts = quantize_experts(self.gate_up, self.down)

    @torch.no_grad()
    def load_expert_weights(self, gate_up: torch.Tensor, down: torch.Tensor) -> None:
        """Copies this rank's experts out of all experts' weights, gate_up [E, 2I, H] and down [E, H, I], and
        quantizes them."""
        check_expert_weights(gate_up, down, f"{_OP}.load_expert_weights")
        expected = [self.num_experts, 2 * self.intermediate, self.hidden]
        if list(gate_up.shape) != expected:
            raise ValueError(f"{_OP}.load_expert_weights: argument 'gate_up' expected shape {expected}, got "
                             f"{list(gate_up.shape)}")
        mine = slice(self.first_expert, self.first_expert + self.local_experts)
        self.gate_up.copy_(gate_up[mine])
        self.down.copy_(down[mine])
        self.quantize_weights()

    def forward(self, tokens: torch.Tensor, topk_ids: torch.Tensor, topk_weights: torch.Tensor, *,
                mode: str = "prefill") -> torch.Tensor:
        dispatched = self.dispatch(tokens, topk_ids, topk_weights, mode=mode)
        return self.combine(self.run_experts(dispatched), dispatched, topk_weights, tokens.dtype)

    # forward's three steps, public for timing them (bench/bench_moe.py) and for overlapping them with other work.

    def dispatch(self, tokens: torch.Tensor, topk_ids: torch.Tensor, topk_weights: torch.Tensor, *,
                 mode: str = "prefill") -> Union[PrefillDispatch, DecodeDispatch]:
        """Checks the arguments, quantizes the tokens and sends each to the ranks of its experts; returns what
        this rank's experts received, in the mode's layout."""
        check_routing(tokens, topk_ids, topk_weights, self.hidden, self.num_experts, _OP)
        if mode == "prefill":
            return dispatch_prefill(tokens, topk_ids, self.num_experts, self.group)
        if mode != "decode":
            raise ValueError(f"{_OP}: argument 'mode' expected 'prefill' or 'decode', got {mode!r}")
        if self.decode_max_tokens is None:
            raise ValueError(f"{_OP}: mode='decode' needs decode_max_tokens (at construction or from "
                             "set_decode_capacity)")
        if tokens.shape[0] > self.decode_max_tokens:
            raise ValueError(f"{_OP}: argument 'tokens' expected at most decode_max_tokens={self.decode_max_tokens} "
                             f"rows in mode='decode', got {tokens.shape[0]}")
        # The masked GEMM's hint: the tokens an expert gets from all ranks when routing is even.
        expected_m = max(1, math.ceil(tokens.shape[0] * topk_ids.shape[1] * self.world_size / self.num_experts))
        return dispatch_decode(tokens, topk_ids, self.num_experts, self.max_tokens_per_expert, expected_m,
                               self.group)

    def run_experts(self, dispatched: Union[PrefillDispatch, DecodeDispatch]) -> torch.Tensor:
        """This rank's experts on what it received: BF16, in the dispatch's layout."""
        if isinstance(dispatched, PrefillDispatch):
            return experts_prefill(dispatched, self.quantized_experts)
        return experts_decode(dispatched, self.quantized_experts)

    def combine(self, expert_outputs: torch.Tensor, dispatched: Union[PrefillDispatch, DecodeDispatch],
                topk_weights: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """Sends the outputs back to the ranks of their tokens and sums each token's, weighted: [T, H] in dtype."""
        if isinstance(dispatched, PrefillDispatch):
            return combine_prefill(expert_outputs, dispatched, topk_weights, dtype, self.group)
        output = combine_decode(expert_outputs, dispatched, topk_weights, dtype, self.group)
        self.dropped_pairs += dispatched.dropped
        if not is_capturing(output):
            self.check_capacity()
        return output

    def check_capacity(self) -> None:
        """Raises RuntimeError if decode dropped pairs for want of capacity since the last check (reads a device
        tensor: call it outside a capture, e.g. after replaying a graph), then resets the count."""
        dropped = int(self.dropped_pairs)
        self.dropped_pairs.zero_()
        if dropped:
            raise RuntimeError(f"{_OP}: decode dropped {dropped} (token, expert) pairs on rank {self.rank}: more "
                               f"than max_tokens_per_expert={self.max_tokens_per_expert} pairs went to one expert; "
                               "give the layer a larger one (set_decode_capacity)")
