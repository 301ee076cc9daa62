"""The layer in one process, for tests: all experts local, the same quantization, and each expert computed on
its own tokens with fgemm.fp8_gemm_nt, without the grouped layouts or any communication."""

import torch
from torch import nn

from ..quantize import per_token_cast_to_fp8
from .combine import weighted_sum
from .experts import check_expert_weights, quantize_experts
from .ffn import ffn_dense
from .routing import check_routing

_OP = "fgemm.moe.ReferenceMoE"


class ReferenceMoE(nn.Module):
    """All experts' weights, gate_up [E, 2I, H] and down [E, H, I], quantized as ExpertParallelMoE does;
    forward(tokens, topk_ids, topk_weights) as ExpertParallelMoE's on the concatenated tokens of all ranks."""

    def __init__(self, gate_up: torch.Tensor, down: torch.Tensor):
        super().__init__()
        check_expert_weights(gate_up, down, _OP)
        self.num_experts, _, self.hidden = gate_up.shape
        self.quantized_experts = quantize_experts(gate_up, down)

    def forward(self, tokens: torch.Tensor, topk_ids: torch.Tensor, topk_weights: torch.Tensor) -> torch.Tensor:
        check_routing(tokens, topk_ids, topk_weights, self.hidden, self.num_experts, _OP)
        codes, scales = per_token_cast_to_fp8(tokens)
        outputs = torch.zeros(*topk_ids.shape, self.hidden, dtype=torch.bfloat16, device=tokens.device)
        for expert in range(self.num_experts):
            token, k = (topk_ids == expert).nonzero(as_tuple=True)
            if token.numel():
                outputs[token, k] = ffn_dense((codes[token], scales[token]), self.quantized_experts, expert)
        return weighted_sum(outputs, topk_weights, tokens.dtype)
