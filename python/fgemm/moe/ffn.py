"""The experts' feed-forward network, DeepSeek-V3's: y = down(silu(gate(x)) * up(x)), with FP8 activations
(per-token 1x128 scales) and FP8 weights (128x128 blocks), in fgemm's two m-grouped layouts.

Both layouts do the same arithmetic row by row: the gate/up GEMM in FP32 rounded to BF16, the SiLU gate in
FP32, the product quantized per token to FP8, the down GEMM rounded to BF16.
"""

from typing import Tuple

import torch
import torch.nn.functional as F

from ..gemm import fp8_gemm_nt, m_grouped_fp8_gemm_nt_contiguous, m_grouped_fp8_gemm_nt_masked
from ..quantize import per_token_cast_to_fp8
from .experts import QuantizedExperts

TensorPair = Tuple[torch.Tensor, torch.Tensor]


def silu_and_mul(gate_up: torch.Tensor) -> torch.Tensor:
    """silu(gate) * up in FP32, where the last dimension of gate_up is [gate | up]."""
    gate, up = gate_up.float().chunk(2, dim=-1)
    return F.silu(gate) * up


def _quantize_activation(hidden: torch.Tensor) -> TensorPair:
    # The MN-major scales are the GEMMs' fast layout on the GPU and cost nothing on the CPU.
    return per_token_cast_to_fp8(hidden, mn_major_scales=True)


def ffn_dense(tokens: TensorPair, experts: QuantizedExperts, expert: int) -> torch.Tensor:
    """One expert's FFN on [M, H] FP8 tokens with fp8_gemm_nt: [M, H] BF16."""
    codes, scales = tokens
    rows, hidden = codes.shape
    gate_up = torch.empty(rows, experts.gate_up.shape[1], dtype=torch.bfloat16, device=codes.device)
    fp8_gemm_nt(tokens, (experts.gate_up[expert], experts.gate_up_scales[expert]), gate_up)
    out = torch.empty(rows, hidden, dtype=torch.bfloat16, device=codes.device)
    fp8_gemm_nt(_quantize_activation(silu_and_mul(gate_up)), (experts.down[expert], experts.down_scales[expert]), out)
    return out


def ffn_contiguous(tokens: TensorPair, m_indices: torch.Tensor, experts: QuantizedExperts) -> torch.Tensor:
    """The FFN on [M_sum, H] FP8 tokens in the contiguous layout (m_indices int32 [M_sum], -1 for padding
    rows): [M_sum, H] BF16, padding rows zero."""
    codes, _ = tokens
    rows, hidden = codes.shape
    # Zeros, not empty: padding rows are never written by the GEMMs, and the activation quantizer reads them.
    gate_up = torch.zeros(rows, experts.gate_up.shape[1], dtype=torch.bfloat16, device=codes.device)
    m_grouped_fp8_gemm_nt_contiguous(tokens, (experts.gate_up, experts.gate_up_scales), gate_up, m_indices)
    out = torch.zeros(rows, hidden, dtype=torch.bfloat16, device=codes.device)
    m_grouped_fp8_gemm_nt_contiguous(_quantize_activation(silu_and_mul(gate_up)),
                                     (experts.down, experts.down_scales), out, m_indices)
    return out


def ffn_masked(tokens: TensorPair, masked_m: torch.Tensor, expected_m: int,
               experts: QuantizedExperts) -> torch.Tensor:
    """The FFN on [G, M_max, H] FP8 tokens in the masked layout (masked_m int32 [G] on the device, the rows of
    each expert that are real): [G, M_max, H] BF16, rows past masked_m zero."""
    codes, _ = tokens
    groups, rows, hidden = codes.shape
    gate_up = torch.zeros(groups, rows, experts.gate_up.shape[1], dtype=torch.bfloat16, device=codes.device)
    m_grouped_fp8_gemm_nt_masked(tokens, (experts.gate_up, experts.gate_up_scales), gate_up, masked_m, expected_m)
    out = torch.zeros(groups, rows, hidden, dtype=torch.bfloat16, device=codes.device)
    m_grouped_fp8_gemm_nt_masked(_quantize_activation(silu_and_mul(gate_up)), (experts.down, experts.down_scales),
                                 out, masked_m, expected_m)
    return out
