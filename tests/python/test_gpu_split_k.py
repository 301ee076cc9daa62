"""Split-K (forced, and chosen by the heuristics for the 16-bit kinds' shapes of few tiles): the CTAs of a cluster
share each tile's K blocks and add their sums in distributed shared memory, in a fixed order. Every split forced
on odd shapes of the normal and masked layouts, FP8 and 16-bit, against the FP64 reference into NaN-poisoned
outputs; the same bits on every call and every CUDA-graph replay; and compute-sanitizer's memcheck and racecheck."""

import random

import pytest
import torch

import fgemm
from checks_16bit import check_dense, check_masked
from gpu_reference import MAX_DIFF, forced_config, random_operands, reference_gemm
from sanitizer import assert_sanitizer_clean
from test_gpu_grouped import run_masked

pytestmark = pytest.mark.gpu

# (block_m, block_n, split_k): narrow and wide tiles, one to three math warpgroups, every split count.
FP8_SPLITS = [(64, 144, 8), (64, 16, 8), (64, 256, 4), (128, 136, 8), (128, 128, 4), (128, 64, 2), (192, 96, 2)]
BF16_SPLITS = [(64, 48, 8), (64, 128, 4), (128, 72, 4), (128, 128, 2)]
# The storage orders with C or without; an MN-major B (second letter "n") is loaded in boxes of 64 columns, so
# each warpgroup's columns must be whole boxes (tiles of 64 rows split their columns between two warpgroups).
LETTERS_OUT_C = [("nt", "same", None), ("nn", "fp32", "c"), ("tn", "fp32", "d"), ("tt", "same", "c")]
BF16_CASES = [(config, letters, out, c_mode) for config in BF16_SPLITS for letters, out, c_mode in LETTERS_OUT_C
              if letters[1] == "t" or config[1] // (2 if config[0] == 64 else 1) % 64 == 0]


def fp8_gemm_into_poisoned(m, n, k, c=None, out_dtype=torch.bfloat16, sfa_mn_major=False):
    """(d, reference) of fp8_gemm_nt on random operands, D a NaN-poisoned slice of a wider buffer; sfa row-major
    (copied by the producer's helper warp) or MN-major (loaded by the TMA)."""
    (a, sfa), (b, sfb) = random_operands(m, n, k)
    storage = torch.full((m, (n + 15) // 8 * 8), float("nan"), dtype=out_dtype, device="cuda")
    d = storage[:, :n]
    fgemm.fp8_gemm_nt((a, fgemm.get_mn_major_tma_aligned_tensor(sfa) if sfa_mn_major else sfa), (b, sfb), d, c)
    torch.cuda.synchronize()
    assert storage[:, n:].isnan().all()
    return d, reference_gemm(a, sfa, b, sfb, c)


@pytest.mark.parametrize("sfa_mn_major", [False, True])
@pytest.mark.parametrize("config", FP8_SPLITS)
@pytest.mark.parametrize("m,n,k", [(1, 2112, 7168), (17, 1000, 2048), (100, 4100, 4096), (333, 576, 7168)])
def test_fp8_normal_every_split(config, m, n, k, sfa_mn_major):
    with forced_config(config[0], config[1], 1, 1, config[2]):
        d, ref = fp8_gemm_into_poisoned(m, n, k, sfa_mn_major=sfa_mn_major)
    assert fgemm.calc_diff(d, ref) < MAX_DIFF


@pytest.mark.parametrize("config", [(64, 128, 4), (128, 128, 8)])
def test_fp8_normal_split_with_fp32_out_and_c(config):
    m, n, k = 77, 1000, 2048
    c = torch.randn(m, n, device="cuda")
    with forced_config(config[0], config[1], 1, 1, config[2]):
        d, ref = fp8_gemm_into_poisoned(m, n, k, c=c, out_dtype=torch.float32)
    assert fgemm.calc_diff(d, ref) < MAX_DIFF


@pytest.mark.parametrize("config", [(64, 128, 4), (128, 64, 2)])
def test_fp8_masked_split_with_random_counts(config):
    rng = random.Random(config[2])
    with forced_config(config[0], config[1], 1, 1, config[2]):
        run_masked(4, 320, 1000, 1024, [0, 320, 1, 150], expected_m=64)
        for _ in range(3):
            run_masked(4, 320, 1000, 1024, [rng.randint(0, 320) for _ in range(4)], expected_m=64)


@pytest.mark.parametrize("config,letters,out,c_mode", BF16_CASES)
@pytest.mark.parametrize("dtype_name", ["bf16", "fp16"])
def test_16bit_normal_every_split(config, letters, out, c_mode, dtype_name):
    with forced_config(config[0], config[1], 1, 1, config[2]):
        for m, n, k in [(1, 520, 1024), (130, 1000, 2048), (333, 200, 3072)]:
            check_dense(dtype_name, letters, out, c_mode, m, n, k, device="cuda")


# Three math warpgroups (192-row tiles) beside a ring of C of one slot: the barriers then number an odd count of
# 8-byte words (a full and an empty one per stage, one per warpgroup and slot of C, split-K's two), and split-K's
# sums, read and written 16 bytes at a time, once lay behind them 8 bytes off a 16-byte boundary (a
# misaligned-address fault on an H100, which the fuzz runner found).
@pytest.mark.parametrize("c_slots", [1, 2])
@pytest.mark.parametrize("dtype_name", ["bf16", "fp16"])
def test_16bit_split_of_three_warpgroups_beside_a_ring_of_c(dtype_name, c_slots):
    with forced_config(192, 64, 1, 1, 4, c_slots=c_slots):
        for m, n, k in [(4616, 8, 5888), (333, 200, 3072)]:
            check_dense(dtype_name, "tn", "same", "c", m, n, k, device="cuda")


@pytest.mark.parametrize("config", [(64, 128, 4), (128, 72, 2)])
def test_16bit_masked_split(config):
    with forced_config(config[0], config[1], 1, 1, config[2]):
        check_masked("bf16", "fp32", [0, 65, 130, 7], 130, 520, 1024, device="cuda")


@pytest.mark.parametrize("split", [2, 4, 8])
@pytest.mark.parametrize("m,n,k", [(1, 2112, 7168), (64, 2112, 7168), (128, 576, 7168), (32, 4096, 7168)])
def test_forced_split_with_the_heuristics_tile_on_decode_shapes(m, n, k, split):
    with forced_config(0, 0, 0, 0, split):
        d, ref = fp8_gemm_into_poisoned(m, n, k)
    assert fgemm.calc_diff(d, ref) < MAX_DIFF


def test_forced_split_that_does_not_divide_k_is_refused():
    # 1024 / 128 = 8 K blocks: three splits cannot share them, eight leave one block each.
    (a, sfa), (b, sfb) = random_operands(64, 256, 1024)
    d = torch.empty(64, 256, dtype=torch.bfloat16, device="cuda")
    for split in (3, 8):
        with forced_config(64, 128, 1, 1, split), pytest.raises(ValueError, match="not a supported configuration"):
            fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)


@pytest.mark.parametrize("config", [(64, 144, 8), (128, 128, 4)])
def test_same_bits_every_call_and_every_graph_replay(config):
    (a, sfa), (b, sfb) = random_operands(128, 2112, 7168)
    d = torch.empty(128, 2112, dtype=torch.float32, device="cuda")
    with forced_config(config[0], config[1], 1, 1, config[2]):
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
        first = d.clone()
        for _ in range(20):
            d.fill_(float("nan"))
            fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
            assert torch.equal(d, first)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
    for _ in range(20):
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(d, first)
    assert fgemm.calc_diff(first, reference_gemm(a, sfa, b, sfb)) < MAX_DIFF


def test_splits_agree_with_each_other_within_rounding():
    # Each split count adds its partial sums in its own fixed order: the results differ by rounding only.
    (a, sfa), (b, sfb) = random_operands(64, 1024, 7168)
    results = []
    for split in (1, 2, 4, 8):
        d = torch.empty(64, 1024, dtype=torch.float32, device="cuda")
        with forced_config(64, 128, 1, 1, split):
            fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
        results.append(d)
    for d in results[1:]:
        assert fgemm.calc_diff(d, results[0]) < 1e-9


# ---------------------------------------------------------------------------------------------- sanitizers

SANITIZER_PROGRAM = """
import torch
import fgemm
from checks_16bit import check_dense, check_masked
from gpu_reference import forced_config, random_operands
from test_gpu_grouped import run_masked
for bm, bn, split in [(64, 144, 8), (128, 64, 2)]:
    with forced_config(bm, bn, 1, 1, split):
        (a, sfa), (b, sfb) = random_operands(70, 304, 2048)
        d = torch.empty(70, 304, dtype=torch.bfloat16, device="cuda")
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
        run_masked(3, 130, 304, 2048, [0, 130, 7], expected_m=64)
with forced_config(64, 128, 1, 1, 4):
    check_dense("bf16", "nt", "fp32", "c", 70, 136, 1024, device="cuda")
    check_masked("bf16", "same", [0, 65, 7], 130, 136, 1024, device="cuda")
torch.cuda.synchronize()
"""


def test_compute_sanitizer_memcheck_is_clean(tmp_path):
    assert_sanitizer_clean(SANITIZER_PROGRAM, tmp_path)


# Small problems: splits in two, four and eight; FP8 and BF16 (with C), normal and masked layouts; and a split the
# heuristics choose (1 x 128 x 7168 BF16). Racecheck reports no hazard of the hand-over of the sums (st.async into
# the owner's slots, counted on its barrier; with the reduction before it, which published plain shared-memory
# stores through a cluster-scope fence and an mbarrier, it reported every pair of store and load).
RACECHECK_PROGRAM = """
import torch
import fgemm
from checks_16bit import check_dense, check_masked
from gpu_reference import forced_config, random_operands
from test_gpu_grouped import run_masked
for bm, bn, split, m, n, k in [(64, 16, 8, 20, 16, 2048), (128, 64, 2, 70, 80, 512)]:
    with forced_config(bm, bn, 1, 1, split):
        (a, sfa), (b, sfb) = random_operands(m, n, k)
        d = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
        run_masked(2, 72, n, k, [0, 7], expected_m=64)
with forced_config(64, 128, 1, 1, 4):
    check_dense("bf16", "nt", "fp32", "c", 20, 72, 1024, device="cuda")
    check_masked("bf16", "same", [0, 9], 72, 72, 1024, device="cuda")
check_dense("bf16", "nt", "same", None, 1, 128, 7168, device="cuda")
torch.cuda.synchronize()
"""


def test_compute_sanitizer_racecheck_is_clean(tmp_path):
    assert_sanitizer_clean(RACECHECK_PROGRAM, tmp_path, tool="racecheck")
