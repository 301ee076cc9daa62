"""Mixture-of-experts GEMMs with fgemm: the contiguous layout (prefill, training) and the masked layout
(decode, CUDA graphs), each checked against a per-expert fgemm.fp8_gemm_nt (equal up to BF16 rounding).

    python examples/moe_grouped.py      (on the GPU when torch sees one, else on the CPU)
"""

import torch

import fgemm

device = "cuda" if torch.cuda.is_available() else "cpu"
experts, n, k = 4, 512, 1024
SAME = 1e-5  # calc_diff of two results that differ by no more than BF16 rounding
w_fp8, w_scales = fgemm.per_block_cast_to_fp8(torch.randn(experts, n, k, device=device))

# Contiguous: the tokens of all experts in one tensor, each expert's segment padded to a multiple of 128 rows;
# m_indices names each row's expert, -1 a padding row (its output row is left as it was).
tokens_per_expert = [100, 0, 256, 7]
alignment = fgemm.get_m_alignment_for_contiguous_layout()
m_indices = torch.cat([
    torch.tensor([e] * t + [-1] * (-t % alignment), dtype=torch.int32) for e, t in enumerate(tokens_per_expert)
]).to(device)
x_fp8, x_scales = fgemm.per_token_cast_to_fp8(torch.randn(m_indices.numel(), k, device=device))
y = torch.zeros(m_indices.numel(), n, device=device, dtype=torch.bfloat16)
fgemm.m_grouped_fp8_gemm_nt_contiguous((x_fp8, x_scales), (w_fp8, w_scales), y, m_indices)

for expert in range(experts):
    rows = m_indices == expert
    y_expert = torch.empty(int(rows.sum()), n, device=device, dtype=torch.bfloat16)
    fgemm.fp8_gemm_nt((x_fp8[rows], x_scales[rows]), (w_fp8[expert], w_scales[expert]), y_expert)
    assert fgemm.calc_diff(y[rows], y_expert) < SAME
print(f"{device}: contiguous layout, {sum(tokens_per_expert)} tokens over {experts} experts: matches fp8_gemm_nt")

# Masked: a fixed [experts, max_tokens, K] buffer; masked_m (on the device) says how many rows of each expert
# are real, so the call never reads it on the host and can be captured in a CUDA graph.
max_tokens = 64
masked_m = torch.tensor([64, 3, 0, 40], dtype=torch.int32, device=device)
x_fp8, x_scales = fgemm.per_token_cast_to_fp8(torch.randn(experts, max_tokens, k, device=device))
y = torch.zeros(experts, max_tokens, n, device=device, dtype=torch.bfloat16)
fgemm.m_grouped_fp8_gemm_nt_masked((x_fp8, x_scales), (w_fp8, w_scales), y, masked_m, expected_m=32)

for expert, rows in enumerate(masked_m.tolist()):
    y_expert = torch.empty(rows, n, device=device, dtype=torch.bfloat16)
    fgemm.fp8_gemm_nt((x_fp8[expert, :rows], x_scales[expert, :rows]), (w_fp8[expert], w_scales[expert]), y_expert)
    assert fgemm.calc_diff(y[expert, :rows], y_expert) < SAME and not y[expert, rows:].any()
print(f"{device}: masked layout, rows per expert {masked_m.tolist()}: matches fp8_gemm_nt")
