"""Inputs and FP64 references shared by the GPU tests and the benchmark."""

import contextlib

import torch

import fgemm

# calc_diff bound of the GPU tests. The kernels' error on random normal data is about 1e-6 (mostly the BF16
# rounding of D); the bound in ARCHITECTURE.md of 1e-3 would let a wrong scale on a few columns pass, 1e-5 does not.
MAX_DIFF = 1e-5


def dequantize_rows(x_fp8, scales):
    """x [.., R, K] in E4M3 with one scale per (row, 128 columns): FP64 values."""
    k = x_fp8.shape[-1]
    expanded = scales.double().repeat_interleave(128, dim=-1)[..., :k]
    return x_fp8.double() * expanded


def dequantize_blocks(w_fp8, scales):
    """w [.., N, K] in E4M3 with one scale per 128 x 128 block: FP64 values."""
    n, k = w_fp8.shape[-2:]
    expanded = scales.double().repeat_interleave(128, dim=-2)[..., :n, :].repeat_interleave(128, dim=-1)[..., :k]
    return w_fp8.double() * expanded


def random_operands(m, n, k, device="cuda", generator=None):
    """Random normal activations and weights, quantized the DeepSeek-V3 way: (a, sfa), (b, sfb)."""
    a = torch.randn(m, k, device=device, generator=generator, dtype=torch.float32).to(torch.bfloat16)
    b = torch.randn(n, k, device=device, generator=generator, dtype=torch.float32).to(torch.bfloat16)
    return fgemm.per_token_cast_to_fp8(a), fgemm.per_block_cast_to_fp8(b)


def reference_gemm(a, sfa, b, sfb, c=None):
    """D = A * B^T (+ C) in FP64 from the dequantised operands."""
    ref = dequantize_rows(a, sfa) @ dequantize_blocks(b, sfb).transpose(-1, -2)
    return ref if c is None else ref + c.double()


@contextlib.contextmanager
def forced_config(block_m, block_n, cluster_m, cluster_n, split_k=0, c_slots=0, num_stages=0):
    """Runs the GEMMs of the block with this tile, cluster shape, split-K (0 with a tile: none), ring of C (0: the
    heuristics' ring) and stages (0: the most that fit) instead of the heuristics' choice."""
    fgemm._C._force_config(block_m, block_n, cluster_m, cluster_n, split_k, c_slots, num_stages)
    try:
        yield
    finally:
        fgemm._C._force_config(0, 0)
