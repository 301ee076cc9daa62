"""The few-row kernel (kernels/fgemm/sm90/few_rows_kernel.cuh), which runs the BF16 and FP16 GEMMs of at most eight
rows of K-major A and B: every M it takes, both input types, every output type and C (its own, of D's type, or D
itself), ragged N, K shorter than a chunk or not a multiple of 32, K split between the CTAs of a cluster; each
checked against float64 inside NaN-filled buffers (checks_16bit.py), the kernels launched named, the same bits call
after call, a CUDA graph's replay, the problems it leaves to the tiles, and compute-sanitizer's memcheck and
racecheck."""

import pytest
import torch

import fgemm
from checks_16bit import OUT_AND_C, check_dense
from printed_kernels import run_printing_kernels
from sanitizer import assert_sanitizer_clean

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("out,c_mode", OUT_AND_C)
@pytest.mark.parametrize("dtype_name", ["bf16", "fp16"])
@pytest.mark.parametrize("m", [1, 2, 3, 5, 8])
def test_every_output_and_c(m, dtype_name, out, c_mode):
    # 1001 columns: a ragged last CTA; K = 776: 24 chunks of 32 and one of 8, past the CTA's whole turns.
    check_dense(dtype_name, "nt", out, c_mode, m, n=1001, k=776, spare_columns=m % 2, device="cuda")


# (M, N, K): K shorter than a chunk, a single column, N = 8 and 9 around a CTA, K split in 2, 4 and 8 (few columns,
# long K), splits whose last range is shorter, 16 warps a CTA (2112 columns), and the table's decode shapes.
SHAPES = [(1, 1, 8), (4, 9, 24), (7, 8, 4104), (1, 2112, 7168), (3, 200, 7168), (1, 100, 4096), (8, 576, 7168),
          (2, 256, 1064), (5, 256, 2048), (1, 24576, 1536), (1, 32768, 512), (6, 4096, 7168)]


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("dtype_name", ["bf16", "fp16"])
def test_shapes(dtype_name, m, n, k):
    check_dense(dtype_name, "nt", "same", "c", m, n, k, device="cuda")
    check_dense(dtype_name, "nt", "fp32", "d", m, n, k, device="cuda")


# Run with the configurations printed: the kernel of each case, and the problems the few-row kernel leaves to the
# tiles (nine rows, K not a multiple of 8, B MN-major, A MN-major, more than 128 MiB of B).
KERNELS_PROGRAM = """
from checks_16bit import check_dense
for letters, m, n, k in [("nt", 1, 2112, 7168), ("nt", 8, 100, 4096), ("nt", 9, 300, 512), ("nt", 1, 300, 516),
                         ("nn", 1, 300, 512), ("tn", 1, 300, 512), ("nt", 1, 8200, 8200)]:
    check_dense("bf16", letters, "same", None, m, n, k, device="cuda")
    print(f"case {letters} {m} {n} {k}: passed", flush=True)
"""


def test_which_kernel_runs(tmp_path):
    cases, kernels = run_printing_kernels(KERNELS_PROGRAM, tmp_path)
    assert len(cases) == 7, cases
    assert len(kernels) == 7, kernels
    assert [name.startswith("fgemm_sm90_few_rows_") for name in kernels] == [True, True] + [False] * 5, kernels
    # 263 CTAs of 16 warps (fewer than three per SM), and 13 CTAs of 8 warps with K split in 8.
    assert kernels[0].endswith("_w16u2s1") and kernels[1].endswith("_w8u2s8"), kernels


def test_same_bits_call_after_call():
    gen = torch.Generator(device="cuda").manual_seed(5)
    a = torch.randn(3, 7168, generator=gen, device="cuda").bfloat16()
    b = torch.randn(200, 7168, generator=gen, device="cuda").bfloat16()
    first = torch.empty(3, 200, device="cuda")
    fgemm.bf16_gemm_nt(a, b, first)
    for _ in range(5):
        again = torch.full_like(first, float("nan"))
        fgemm.bf16_gemm_nt(a, b, again)
        assert torch.equal(again, first)


def test_replays_from_a_cuda_graph():
    gen = torch.Generator(device="cuda").manual_seed(6)
    a = torch.randn(1, 4096, generator=gen, device="cuda").bfloat16()
    b = torch.randn(576, 4096, generator=gen, device="cuda").bfloat16()
    d = torch.empty(1, 576, device="cuda", dtype=torch.bfloat16)
    fgemm.bf16_gemm_nt(a, b, d)  # compiled and loaded before the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fgemm.bf16_gemm_nt(a, b, d)
    for _ in range(2):
        a.copy_(torch.randn(1, 4096, generator=gen, device="cuda").bfloat16())
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        expected = (a.double() @ b.double().T).to(torch.bfloat16)
        assert fgemm.calc_diff(d, expected) < 1e-5


# A split and an unsplit kernel, every C, both input types; the splits exchange their sums through distributed
# shared memory.
SANITIZER_PROGRAM = """
import torch
from checks_16bit import check_dense
for dtype_name in ("bf16", "fp16"):
    for out, c_mode in (("same", None), ("fp32", "c"), ("same", "c16"), ("fp32", "d")):
        check_dense(dtype_name, "nt", out, c_mode, 3, 100, 2056, spare_columns=1, device="cuda")
        check_dense(dtype_name, "nt", out, c_mode, 8, 1001, 136, device="cuda")
torch.cuda.synchronize()
"""


def test_compute_sanitizer_memcheck_is_clean(tmp_path):
    assert_sanitizer_clean(SANITIZER_PROGRAM, tmp_path)


def test_compute_sanitizer_racecheck_is_clean(tmp_path):
    assert_sanitizer_clean(SANITIZER_PROGRAM, tmp_path, tool="racecheck")
