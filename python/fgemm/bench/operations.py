"""fgemm's calls on one shape of a table, with their baselines, FLOPs, bytes and a check of the result."""

import dataclasses
from typing import Callable, Dict

import torch

import fgemm
from fgemm.quantize import per_block_dequantize, per_token_dequantize

from . import baselines
from .metrics import gemm_bytes, gemm_flops, quantize_bytes

GEMMS = ("gemm", "contiguous", "masked")
QUANTIZERS = ("per_token", "per_block")
OPERATIONS = GEMMS + QUANTIZERS
# The baselines of each kind of operation, by device: the faster of which a user would otherwise call.
BASELINES = {
    ("cuda", "gemm"): ("cublaslt",),
    ("cpu", "gemm"): ("torch-fp32", "torch-bf16"),
    ("cuda", "quantize"): ("torch-ops",),
    ("cpu", "quantize"): ("torch-ops",),
}
BASELINE_ABOUT = {
    "cublaslt": "cuBLASLt's block-scaled FP8 GEMM through torch._scaled_mm (1x128 and 128x128 scales), called "
                "once per expert for the grouped layouts",
    "torch-fp32": "the FP8 operands dequantised to FP32 with torch operations, torch.matmul in FP32, D rounded "
                  "to BF16 (the dequantisation inside the time, on every call)",
    "torch-bf16": "the FP8 operands dequantised to BF16 (scales rounded to BF16), torch.matmul in BF16",
    "torch-ops": "the quantizer written as a chain of torch operations",
}
UNIT = {operation: "TFLOPS" for operation in GEMMS} | {operation: "GB/s" for operation in QUANTIZERS}


def baseline_kind(operation):
    return "gemm" if operation in GEMMS else "quantize"


@dataclasses.dataclass
class Case:
    """One shape of one operation, ready to time: fgemm's call, the baselines' calls by name, and check(),
    the calc_diff of fgemm's result (after a call) against the same operation in FP32 torch operations."""
    label: str
    flops: int
    bytes: int
    run: Callable[[], object]
    baselines: Dict[str, Callable[[], object]]
    check: Callable[[], float]


def quantized_operands(groups, m, n, k, device, seed=0):
    """Random normal activations [(G,) m, K] quantized per 1x128 and weights [(G,) N, K] per 128x128; without a
    group dimension where groups is None."""
    generator = torch.Generator(device).manual_seed(seed)
    lead = () if groups is None else (groups,)
    x = torch.randn(*lead, m, k, device=device, generator=generator)
    w = torch.randn(*lead, n, k, device=device, generator=generator)
    return fgemm.per_token_cast_to_fp8(x), fgemm.per_block_cast_to_fp8(w)


def sfa_as_given(sfa, mn_major):
    """The activation scales as fgemm is given them: MN-major and TMA-aligned (DeepGEMM's layout), or
    row-major as the quantizer returns them."""
    return fgemm.get_mn_major_tma_aligned_tensor(sfa) if mn_major else sfa


def with_forced_config(run, *config):
    """`run` with a configuration forced on the GEMMs it calls (fgemm._C._force_config's arguments: BLOCK_M,
    BLOCK_N, then optionally the cluster, split-K, ring of C and stages), the heuristics' choice restored
    afterwards."""
    def run_forced():
        fgemm._C._force_config(*config)
        try:
            run()
        finally:
            fgemm._C._force_config(0, 0)
    return run_forced


def normal_gemm(m, n, k, device, sfa_mn_major):
    """Random quantized operands, a BF16 output and the call of fp8_gemm_nt that fills it."""
    (a, sfa), (b, sfb) = quantized_operands(None, m, n, k, device)
    d = torch.empty(m, n, dtype=torch.bfloat16, device=device)
    sfa_in = sfa_as_given(sfa, sfa_mn_major)
    return (a, sfa), (b, sfb), d, lambda: fgemm.fp8_gemm_nt((a, sfa_in), (b, sfb), d)


def grouped_gemm(kind, a, sfa, b, sfb, sfa_mn_major):
    """fgemm's call on per-expert operands [G, m, K] in the contiguous layout (m rows per expert, no padding) or
    the masked one (every group full), and its output as [G, m, N]."""
    groups, m, k = a.shape
    n = b.shape[1]
    if kind == "contiguous":
        d = torch.empty(groups * m, n, dtype=torch.bfloat16, device=a.device)
        m_indices = torch.arange(groups, dtype=torch.int32, device=a.device).repeat_interleave(m)
        a_flat, sfa_flat = a.reshape(groups * m, k), sfa_as_given(sfa.reshape(groups * m, -1), sfa_mn_major)
        return (lambda: fgemm.m_grouped_fp8_gemm_nt_contiguous((a_flat, sfa_flat), (b, sfb), d, m_indices),
                d.view(groups, m, n))
    d = torch.empty(groups, m, n, dtype=torch.bfloat16, device=a.device)
    masked_m = torch.full((groups,), m, dtype=torch.int32, device=a.device)
    sfa_in = sfa_as_given(sfa, sfa_mn_major)
    return lambda: fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa_in), (b, sfb), d, masked_m, m), d


def gemm_baselines(names, a, sfa, b, sfb):
    """The baselines' calls on the same operands ([G, m, K] ones batch over G)."""
    grouped = a.dim() == 3
    makers = {
        "cublaslt": baselines.cublaslt_per_expert if grouped else baselines.cublaslt_blockwise,
        "torch-fp32": baselines.dequantize_matmul_bf16_out(torch.float32),
        "torch-bf16": baselines.dequantize_matmul_bf16_out(torch.bfloat16),
    }
    return {name: makers[name](a, sfa, b, sfb) for name in names}


def gemm_case(operation, entry, device, baseline_names, sfa_mn_major):
    if operation == "gemm":
        groups, m = 1, entry["m"]
        (a, sfa), (b, sfb), d, run = normal_gemm(m, entry["n"], entry["k"], device, sfa_mn_major)
        label = f"{m} × {entry['n']} × {entry['k']}"
    else:
        groups, m = entry["groups"], entry["m_per_group"]
        (a, sfa), (b, sfb) = quantized_operands(groups, m, entry["n"], entry["k"], device)
        run, d = grouped_gemm(operation, a, sfa, b, sfb, sfa_mn_major)
        label = f"{groups} × {m} × {entry['n']} × {entry['k']}"
    n, k = entry["n"], entry["k"]
    return Case(label=label, flops=gemm_flops(groups, m, n, k), bytes=gemm_bytes(groups, m, n, k), run=run,
                baselines=gemm_baselines(baseline_names, a, sfa, b, sfb),
                check=lambda: fgemm.calc_diff(d, baselines.dequantized_matmul(a, sfa, b, sfb, torch.float32)))


def quantize_case(operation, entry, device, baseline_names):
    m, k = entry["m"], entry["k"]
    x = torch.randn(m, k, device=device, generator=torch.Generator(device).manual_seed(0)).to(torch.bfloat16)
    if operation == "per_token":
        quantize, chain, dequantize, rows_per_scale = (
            fgemm.per_token_cast_to_fp8, baselines.torch_per_token, per_token_dequantize, 1)
    else:
        quantize, chain, dequantize, rows_per_scale = (
            fgemm.per_block_cast_to_fp8, baselines.torch_per_block, per_block_dequantize, 128)
    chains = {"torch-ops": lambda: chain(x)}
    return Case(label=f"{m} × {k}", flops=0, bytes=quantize_bytes(m, k, rows_per_scale), run=lambda: quantize(x),
                baselines={name: chains[name] for name in baseline_names},
                check=lambda: fgemm.calc_diff(dequantize(*quantize(x)), x))


def make_case(operation, entry, device, baseline_names, sfa_mn_major):
    if operation in GEMMS:
        return gemm_case(operation, entry, device, baseline_names, sfa_mn_major)
    return quantize_case(operation, entry, device, baseline_names)
