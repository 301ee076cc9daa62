"""bench/bench_swap_ab.py's premise, on the CPU: the 1D1D call on the swapped FP8 operands, and the BF16 call on the
swapped BF16 ones, compute D transposed."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

import fgemm

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import bench_swap_ab  # noqa: E402
from fgemm.bench.operations import quantized_operands  # noqa: E402


@pytest.mark.parametrize("m, n, k", [(1, 256, 256), (5, 320, 384), (17, 136, 512)])
def test_the_swapped_1d1d_call_gives_d_transposed(m, n, k):
    (a, sfa), (b, sfb) = quantized_operands(None, m, n, k, "cpu")
    d = torch.empty(m, n, dtype=torch.bfloat16)
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
    w, x, d_t = bench_swap_ab.swapped_operands(a, sfa, b, sfb)
    assert d_t.shape == (n, max(16, -(-m // 16) * 16))
    bench_swap_ab.swapped_gemm(w, x, d_t)
    assert fgemm.calc_diff(d_t[:, :m].t(), d) < 1e-5
    assert torch.equal(d_t[:, m:], torch.zeros_like(d_t[:, m:]))  # the padding tokens are zero rows of X


@pytest.mark.parametrize("m, n, k, out", [(1, 256, 448, torch.float32), (7, 320, 384, torch.bfloat16),
                                          (17, 136, 512, torch.float32)])
def test_the_swapped_bf16_call_gives_d_transposed(m, n, k, out):
    a, b = torch.randn(m, k).bfloat16(), torch.randn(n, k).bfloat16()
    d = torch.empty(m, n, dtype=out)
    fgemm.bf16_gemm_nt(a, b, d)
    w, x, d_t = bench_swap_ab.swapped_16bit_operands(a, b, d)
    assert d_t.shape == (n, max(16, -(-m // 16) * 16)) and d_t.dtype == out
    fgemm.bf16_gemm_nt(w, x, d_t)
    assert fgemm.calc_diff(d_t[:, :m].t(), d) < 1e-5
    assert torch.equal(d_t[:, m:], torch.zeros_like(d_t[:, m:]))  # the padding tokens are zero rows of X


def test_the_bf16_rows_are_the_decode_rows_of_the_anchors():
    rows = bench_swap_ab.bf16_rows()
    assert rows and all(row["m"] <= 128 for row in rows)
    assert {"m": 1, "n": 256, "k": 7168, "out": "fp32"} in rows
    assert len(rows) == len({tuple(row.values()) for row in rows})


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine could run the benchmark")
def test_without_a_gpu_it_says_so():
    run = subprocess.run([sys.executable, str(BENCH / "bench_swap_ab.py")], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1 and "needs a CUDA device" in run.stderr
