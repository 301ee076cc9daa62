"""fgemm.warmup on a Hopper GPU: after it, GEMMs at any M of the range compile nothing (FP8's, and the 16-bit GEMMs'
tiles and few-row kernel); a first call inside a CUDA-graph capture compiles and loads its kernel and is captured
like any other."""

import random

import pytest
import torch

import fgemm
from checks_16bit import check_contiguous
from gpu_reference import MAX_DIFF, dequantize_blocks, dequantize_rows, random_operands, reference_gemm

pytestmark = pytest.mark.gpu


def test_after_a_warmup_no_gemm_of_the_range_compiles(tmp_path, monkeypatch):
    monkeypatch.setenv("FGEMM_CACHE_DIR", str(tmp_path))
    n, k = 1536, 384  # a shape no other test uses, so that none of its kernels is loaded yet
    ms = [1, 7, 64, 65, 128, 200, 333, 512, 640, 1000]
    # Quantized first: the quantizers' kernels are compiled (into the same cache) before the warm-up.
    operands = {m: random_operands(m, n, k) for m in ms}
    mn_major = {m: fgemm.get_mn_major_tma_aligned_tensor(operands[m][0][1]) for m in ms}
    torch.cuda.synchronize()
    kernels = fgemm.warmup([("fp8_gemm_nt", n, k)], (1, 1000))
    assert kernels and all(kernel.compiled for kernel in kernels)
    cached = sorted(tmp_path.iterdir())
    for m in ms:
        (a, sfa), (b, sfb) = operands[m]
        d = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
        fgemm.fp8_gemm_nt((a, mn_major[m]), (b, sfb), d)
        assert fgemm.calc_diff(d, reference_gemm(a, sfa, b, sfb)) < MAX_DIFF, m
    assert sorted(tmp_path.iterdir()) == cached  # no GEMM compiled anything after the warm-up
    again = fgemm.warmup([("fp8_gemm_nt", n, k)], (1, 1000))
    assert sorted(kernel.name for kernel in again) == sorted(kernel.name for kernel in kernels)
    assert not any(kernel.compiled for kernel in again)  # loaded already


def test_after_a_warmup_no_sixteen_bit_gemm_of_the_range_compiles(tmp_path, monkeypatch):
    monkeypatch.setenv("FGEMM_CACHE_DIR", str(tmp_path))
    n, k = 1544, 392  # a shape no other test uses, so that none of its kernels is loaded yet
    shapes = [{"op": "bf16_gemm_nt", "n": n, "k": k, "with_c": True},
              {"op": fgemm.fp16_gemm_nn, "n": n, "k": k, "out_dtype": torch.float32}]
    kernels = fgemm.warmup(shapes, (1, 300))
    assert kernels and all(kernel.compiled for kernel in kernels)
    assert sum(kernel.name.startswith("fgemm_sm90_few_rows_") for kernel in kernels) == 1
    cached = sorted(tmp_path.iterdir())
    gen = torch.Generator("cuda").manual_seed(24)
    for m in [1, 5, 8, 9, 64, 129, 300]:
        # bf16_gemm_nt with C = D (the few-row kernel up to eight rows), fp16_gemm_nn into FP32 (the tiles).
        a = torch.randn(m, k, device="cuda", generator=gen).bfloat16()
        b = torch.randn(n, k, device="cuda", generator=gen).bfloat16()
        d = torch.randn(m, n, device="cuda", generator=gen).bfloat16()
        expected = a.double() @ b.double().T + d.double()
        fgemm.bf16_gemm_nt(a, b, d, d)
        assert fgemm.calc_diff(d, expected) < MAX_DIFF, m
        a = torch.randn(m, k, device="cuda", generator=gen).half()
        b = torch.randn(k, n, device="cuda", generator=gen).half()
        d = torch.full((m, n), float("nan"), device="cuda")
        fgemm.fp16_gemm_nn(a, b, d)
        assert fgemm.calc_diff(d, a.double() @ b.double()) < MAX_DIFF, m
    assert sorted(tmp_path.iterdir()) == cached  # no GEMM compiled anything after the warm-up


def test_after_a_warmup_the_prefix_sums_layout_compiles_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("FGEMM_CACHE_DIR", str(tmp_path))
    n, k = 1304, 264  # a shape no other test uses
    kernels = fgemm.warmup([{"op": "m_grouped_bf16_gemm_nt_contiguous", "n": n, "k": k, "use_psum_layout": True}],
                           (1, 1024))
    assert kernels and all("_contiguous_psum_" in kernel.name for kernel in kernels)
    cached = sorted(tmp_path.iterdir())
    check_contiguous("bf16", "nt", "same", True, [5, 0, 130, 300], 3, n, k, device="cuda")
    assert sorted(tmp_path.iterdir()) == cached


def test_a_first_call_inside_a_capture_compiles_and_is_captured(tmp_path, monkeypatch):
    monkeypatch.setenv("FGEMM_CACHE_DIR", str(tmp_path))
    groups, m_max, n, k = 3, 192, 1664, 640  # a shape no other test uses: its kernel is compiled in the capture
    x = torch.randn(groups, m_max, k, device="cuda", dtype=torch.bfloat16)
    a, sfa = fgemm.per_token_cast_to_fp8(x.reshape(-1, k))
    a, sfa = a.reshape(groups, m_max, k), sfa.reshape(groups, m_max, -1)
    pairs = [fgemm.per_block_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16))
             for _ in range(groups)]
    b, sfb = torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])
    sfa_mn_major = fgemm.get_mn_major_tma_aligned_tensor(sfa)
    masked_m = torch.full((groups,), m_max, dtype=torch.int32, device="cuda")
    d = torch.empty(groups, m_max, n, dtype=torch.bfloat16, device="cuda")
    torch.cuda.synchronize()
    cached = set(tmp_path.iterdir())  # the quantizers' kernels, compiled above
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa_mn_major), (b, sfb), d, masked_m, 100)
    assert len(set(tmp_path.iterdir()) - cached) == 1  # the GEMM's kernel, compiled during the capture
    ref = dequantize_rows(a, sfa) @ dequantize_blocks(b, sfb).transpose(1, 2)
    rng = random.Random(5)
    for replay in range(10):
        counts = [rng.randint(0, m_max) for _ in range(groups)]
        masked_m.copy_(torch.tensor(counts, dtype=torch.int32))
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        for g, rows in enumerate(counts):
            if rows:
                assert fgemm.calc_diff(d[g, :rows], ref[g, :rows]) < MAX_DIFF, (replay, g)
