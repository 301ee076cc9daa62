"""The BF16 and FP16 GEMMs on the GPU against the float64 product of the same 16-bit values (checks_16bit.py):
M from 0 to 5000, N and K not multiples of 64 or 128, every layout letter, dtype, output dtype and C, D inside
NaN-filled buffers, the grouped layouts with empty groups, the masked GEMM replayed from a CUDA graph with new
counts, and compute-sanitizer's memcheck and racecheck on small shapes of every function."""

import random

import pytest
import torch

import fgemm
from checks_16bit import (
    OUT_AND_C,
    check_contiguous,
    check_dense,
    check_k_grouped,
    check_masked,
    check_masked_rows,
    masked_operands,
)
from gpu_reference import forced_config
from operands_16bit import DTYPES, LETTERS, MAX_DIFF
from printed_kernels import assert_each_case_launched
from sanitizer import assert_sanitizer_clean

pytestmark = pytest.mark.gpu

# The M of every dense combination: the edges of the tiles and the kernels' choices, and random ones.
_RNG = random.Random(2026)
M_VALUES = [0, 1, 64, 127, 4097] + [_RNG.randint(0, 5000) for _ in range(3)]


@pytest.mark.parametrize("out,c_mode", OUT_AND_C)
@pytest.mark.parametrize("letters", LETTERS)
@pytest.mark.parametrize("dtype_name", DTYPES)
def test_dense_every_combination(dtype_name, letters, out, c_mode):
    for m in M_VALUES:
        check_dense(dtype_name, letters, out, c_mode, m, n=1001, k=776, spare_columns=m % 2, device="cuda")


def random_dense_cases(count, seed):
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        m = rng.choice([1, 63, 65, 129, 1000, 2049, 5000, rng.randint(0, 5000)])
        n = rng.choice([8, 24, 100, 200, 1000, 2112, 4097, rng.randint(1, 4100)])
        k = 8 * rng.randint(1, 512) if i % 3 else rng.choice([8, 16, 120, 136, 4104, 7168])
        letters, dtype_name = LETTERS[i % 4], ("bf16", "fp16")[i // 4 % 2]
        out, c_mode = OUT_AND_C[i % len(OUT_AND_C)]
        cases.append((dtype_name, letters, out, c_mode, m, n, k, i % 2))
    return cases


@pytest.mark.parametrize("dtype_name,letters,out,c_mode,m,n,k,spare_columns", random_dense_cases(40, seed=16))
def test_dense_random_shapes(dtype_name, letters, out, c_mode, m, n, k, spare_columns):
    check_dense(dtype_name, letters, out, c_mode, m, n, k, spare_columns, device="cuda")


# Problems of fewer rows than a tile, whose stages load only 8, 16 or 32 rows of A where A is K-major
# (TileConfig::a_rows), each side of those edges; and the shapes of few tiles the heuristics split in two or four
# (M = 1 and 128 with N = 576 and 256, K = 7168), with C and FP32 out, the same bits call after call.
@pytest.mark.parametrize("m", [1, 7, 8, 9, 16, 17, 31, 32, 33])
@pytest.mark.parametrize("letters", ["nt", "tn"])
def test_few_rows_of_a(m, letters):
    check_dense("bf16", letters, "same", None, m, n=1001, k=776, spare_columns=1, device="cuda")
    check_dense("fp16", letters, "fp32", "c", m, n=1001, k=776, device="cuda")


@pytest.mark.parametrize("m,n", [(1, 576), (128, 576), (1, 256), (128, 256)])
@pytest.mark.parametrize("out,c_mode", [("same", None), ("same", "c"), ("fp32", "c")])
def test_shapes_the_heuristics_split(m, n, out, c_mode):
    first = check_dense("bf16", "nt", out, c_mode, m, n, 7168, spare_columns=1, device="cuda")
    again = check_dense("bf16", "nt", out, c_mode, m, n, 7168, spare_columns=1, device="cuda")
    assert torch.equal(first, again)


# C through its ring in shared memory (epilogue_c_ring.cuh) under forced tiles and rings: rings that hold all of a
# warpgroup's chunks of C (64 x 64 tiles: one chunk; 128 x 256: eight, beside two stages; 128 x 224: seven;
# 192 x 128: four) and rings that stream some of them in the epilogue (128 x 256 and 128 x 224 with four slots),
# with enough tiles that every CTA takes several: the slots' phases turn over, and each tile's first chunks land in
# the bytes where the tile before staged D for its store. Edges in M and a ragged N, each operand of each
# major-ness. c_slots 0 takes the heuristics' ring for the tile. A C of D's 16-bit type has chunks of 64 columns:
# half as many (128 x 224: three and a half), in rings that hold them all and rings that stream some, for a C apart
# from D and for D itself.
@pytest.mark.parametrize("block_m,block_n,c_slots,letters,out,c_mode", [
    (64, 64, 0, "nt", "same", "c"), (128, 64, 0, "tn", "same", "c"), (128, 256, 4, "nt", "same", "c"),
    (128, 256, 8, "nn", "same", "c"), (192, 128, 4, "tn", "same", "c"), (128, 224, 7, "nt", "same", "c"),
    (128, 224, 4, "nt", "same", "c"), (64, 64, 0, "nt", "fp32", "c"), (128, 64, 0, "tn", "fp32", "c"),
    (128, 256, 4, "nt", "fp32", "c"), (128, 256, 8, "nn", "fp32", "c"), (192, 128, 4, "tn", "fp32", "c"),
    (128, 224, 7, "nt", "fp32", "c"), (128, 224, 4, "nt", "fp32", "c"),
    (64, 64, 0, "nt", "same", "c16"), (128, 256, 4, "nn", "same", "c16"), (128, 256, 2, "nt", "same", "d"),
    (192, 128, 2, "tn", "same", "d"), (128, 224, 4, "nt", "same", "c16"), (128, 224, 3, "nt", "same", "d"),
])
def test_c_through_its_ring_under_forced_tiles(block_m, block_n, c_slots, letters, out, c_mode):
    with forced_config(block_m, block_n, 1, 1, 0, c_slots):
        check_dense("bf16", letters, out, c_mode, 2000, 4100, 264, spare_columns=1, device="cuda")
        check_dense("bf16", letters, out, c_mode, 2000, 4097, 136, device="cuda")


# MN-major operands in runs of 32 elements (the 64-byte swizzle, TileConfig::mn_major_run_a/b) under forced tiles
# whose extents are not whole runs of 64: 192 x 96 and 128 x 160 (B's columns), 64-row tiles whose warpgroups take
# 32 and 96 columns, and clusters of two sharing 32 rows of A (1 x 2, A MN-major) or 32 columns of B (2 x 1, B
# MN-major); every storage order with an MN-major operand, BF16 and FP16, 16-bit out and FP32 accumulated in place,
# edges in M and a ragged N, several tiles per CTA.
@pytest.mark.parametrize("block_m,block_n,cluster_m,cluster_n", [
    (192, 96, 1, 1), (128, 160, 1, 1), (64, 64, 1, 1), (64, 192, 1, 1), (64, 128, 1, 2), (128, 64, 2, 1)])
@pytest.mark.parametrize("letters", ["nn", "tn", "tt"])
def test_mn_major_runs_of_32(block_m, block_n, cluster_m, cluster_n, letters):
    with forced_config(block_m, block_n, cluster_m, cluster_n):
        check_dense("bf16", letters, "same", None, 1000, 1001, 776, spare_columns=1, device="cuda")
        check_dense("fp16", letters, "fp32", "d", 2049, 2000, 520, device="cuda")


# A forced stage count (force_config's last argument, for measuring) changes how often the ring of stages turns
# over, not the arithmetic: each tile sums its K blocks in the same order, so D has the same bits as with the
# tile's own stages. The decode rows' 64 x 16 and 64 x 32 tiles alternate K blocks between their warpgroups and
# take multiples of four; 64 x 64 tiles (MN-major operands among them) do not alternate.
@pytest.mark.parametrize("dtype_name,letters,m,block_n,stages", [
    ("bf16", "nt", 1, 16, 8), ("fp16", "nt", 128, 32, 12), ("fp16", "tn", 128, 64, 7), ("bf16", "nn", 77, 64, 4),
    ("fp16", "nt", 200, 64, 5)])
def test_fewer_stages_give_the_same_bits(dtype_name, letters, m, block_n, stages):
    with forced_config(64, block_n, 1, 1):
        own = check_dense(dtype_name, letters, "same", None, m, 2112, 7168, device="cuda")
    with forced_config(64, block_n, 1, 1, 0, 0, stages):
        fewer = check_dense(dtype_name, letters, "same", None, m, 2112, 7168, device="cuda")
    assert torch.equal(own, fewer)


def test_a_forced_stage_count_that_does_not_fit_is_refused():
    with forced_config(64, 16, 1, 1, 0, 0, 6), pytest.raises(ValueError, match="a multiple of 4"):
        check_dense("bf16", "nt", "same", None, 1, 2112, 7168, device="cuda")


@pytest.mark.parametrize("use_psum_layout", [False, True])
@pytest.mark.parametrize("out", ["same", "fp32"])
@pytest.mark.parametrize("letters", ["nt", "nn"])
@pytest.mark.parametrize("dtype_name", DTYPES)
def test_m_grouped_contiguous(dtype_name, letters, out, use_psum_layout):
    rng = random.Random(len(dtype_name + letters + out) + use_psum_layout)
    for rows_per_group, tail, n, k in [([0, 300, 1, 128, 0, 777], 5, 1001, 776), ([1], 0, 24, 8),
                                       ([0, 0, 4097], 127, 200, 4104),
                                       ([rng.randint(0, 600) for _ in range(8)], rng.randint(0, 200), 2112, 7168)]:
        check_contiguous(dtype_name, letters, out, use_psum_layout, rows_per_group, tail, n, k, device="cuda")


@pytest.mark.parametrize("out", ["same", "fp32"])
@pytest.mark.parametrize("dtype_name", DTYPES)
def test_m_grouped_masked(dtype_name, out):
    for masked_m, m_max, n, k in [([0, 1, 64, 127, 300], 300, 1001, 776), ([0], 16, 8, 16),
                                  ([4097, 5000], 5000, 200, 264), ([17, 0, 129, 1], 130, 4097, 7168)]:
        check_masked(dtype_name, out, masked_m, m_max, n, k, device="cuda")


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_masked_cuda_graph_replays_with_new_counts(dtype_name):
    groups, m_max, n, k = 4, 576, 1000, 776  # rows of a 16-bit D are whole 16-byte units
    a, b = masked_operands(dtype_name, groups, m_max, n, k, device="cuda")
    masked_m = torch.full((groups,), m_max, dtype=torch.int32, device="cuda")
    d = torch.empty(groups, m_max, n, dtype=DTYPES[dtype_name], device="cuda")
    gemm = getattr(fgemm, f"m_grouped_{dtype_name}_gemm_nt_masked")
    gemm(a, b, d, masked_m, 300)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        gemm(a, b, d, masked_m, 300)
    rng = random.Random(5)
    for replay in range(12):
        counts = [rng.choice([0, 1, m_max, rng.randint(0, m_max)]) for _ in range(groups)] if replay else [0] * groups
        masked_m.copy_(torch.tensor(counts, dtype=torch.int32))
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check_masked_rows(a, b, d, counts)


@pytest.mark.parametrize("c_mode", [None, "c", "d"])
@pytest.mark.parametrize("dtype_name", DTYPES)
def test_k_grouped(dtype_name, c_mode):
    for ks, m, n in [([0, 256, 128, 0, 512], 257, 1001), ([0, 0], 8, 24), ([128], 1, 8),
                     ([4096, 128, 0, 1024], 2112, 776)]:
        check_k_grouped(dtype_name, c_mode, ks, m, n, device="cuda")


def test_k_grouped_replays_from_a_cuda_graph():
    ks, m, n = [256, 0, 128], 200, 136
    a = torch.randn(sum(ks), m, device="cuda").to(torch.bfloat16)
    b = torch.randn(sum(ks), n, device="cuda").to(torch.bfloat16)
    d = torch.zeros(len(ks), m, n, device="cuda")
    ks_tensor = torch.tensor(ks, dtype=torch.int32, device="cuda")
    fgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, ks_tensor, c=d)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, ks_tensor, c=d)
    graph.replay()  # two products accumulated in d: the eager call's and the replay's
    torch.cuda.synchronize()
    starts = [0, 256, 256]
    for group, (start, k) in enumerate(zip(starts, ks)):
        expected = 2 * (a[start : start + k].double().T @ b[start : start + k].double())
        assert fgemm.calc_diff(d[group], expected) < MAX_DIFF
    assert torch.equal(d[1], torch.zeros_like(d[1]))  # the empty expert: C, zeros, twice


def test_operands_on_the_host_are_refused():
    a = torch.zeros(64, 128, dtype=torch.bfloat16, device="cuda")
    with pytest.raises(ValueError, match="argument 'b'"):
        fgemm.bf16_gemm_nt(a, torch.zeros(64, 128, dtype=torch.bfloat16), torch.empty(64, 64, device="cuda"))


# Decode tiles of at most 32 columns whose two math warpgroups take alternate K blocks (TileConfig::
# alternate_k_blocks, the 16-bit kinds' where M <= 128 and the K blocks are at least 32, a multiple of four): the
# heuristics' 64 x 32 tile of 128 x 2112 x 7168, a ragged N, BF16 and FP32 out, and, with narrow tiles forced,
# several tiles a CTA (warpgroup 1's sums written again while warpgroup 0 may still read them). Run with the
# configurations printed, so that the test knows each kernel alternates.
ALTERNATING_PROGRAM = """
import contextlib, torch
from checks_16bit import check_dense
from gpu_reference import forced_config
for dtype_name, letters, out, m, n, k, tile in [("bf16", "nt", "same", 128, 2112, 7168, None),
                                                ("fp16", "nt", "fp32", 100, 1000, 2304, (64, 32)),
                                                ("bf16", "nt", "same", 1, 4100, 2048, (64, 32)),
                                                ("fp16", "nt", "same", 90, 8200, 2048, (64, 16))]:
    with forced_config(*tile, 1, 1) if tile else contextlib.nullcontext():
        check_dense(dtype_name, letters, out, None, m, n, k, spare_columns=1, device="cuda")
    torch.cuda.synchronize()
    print(f"case {dtype_name} {m} {n} {k} {out} tile={tile}: passed", flush=True)
"""


def test_decode_tiles_alternate_k_blocks(tmp_path):
    assert_each_case_launched(ALTERNATING_PROGRAM, tmp_path, 4, "_alt")


# FP32 D staged one column half at a time for a fifth stage (TileConfig::staged_in_halves: the 16-bit kinds' tiles
# of one wave and four stages): the heuristics' tiles (192 x 96; the in-place ones 128 x 160 on an H100) written and
# accumulated in place, a ragged N (rows stored one at a time in each half), both dtypes. Run with the
# configurations printed, so that the test knows each kernel stages in halves.
HALVES_PROGRAM = """
import torch
from checks_16bit import check_dense
for dtype_name, letters, c_mode, m, n, k in [("bf16", "nt", None, 576, 4096, 1408),
                                             ("fp16", "tn", "d", 1500, 1536, 1408),
                                             ("bf16", "tn", "d", 1500, 1530, 1408)]:
    check_dense(dtype_name, letters, "fp32", c_mode, m, n, k, spare_columns=1, device="cuda")
    torch.cuda.synchronize()
    print(f"case {dtype_name} {letters} {m} {n} {k} {c_mode}: passed", flush=True)
"""


def test_fp32_d_staged_in_halves(tmp_path):
    assert_each_case_launched(HALVES_PROGRAM, tmp_path, 3, "_halves")


# ---------------------------------------------------------------------------------------------- sanitizers

# Every function once on small shapes, in the dtypes given: every letter with and without C and with C being D
# (FP32 and D's type, a ragged N), C through a ring that streams its chunks in the epilogue (128 x 256 tiles, FP32
# and D's type), MN-major operands in runs of 32 (192 x 96 tiles of B, and a 1 x 2 cluster sharing 32 rows of A), FP32
# D in place staged in halves (192 x 96 tiles, a ragged N), a decode tile whose warpgroups take alternate K blocks,
# both contiguous forms with an empty group and padding, masked with an empty group, k-grouped with an empty expert
# and C being D.
SANITIZER_PROGRAM = """
import torch
from checks_16bit import check_contiguous, check_dense, check_k_grouped, check_masked
from gpu_reference import forced_config
from operands_16bit import LETTERS
for dtype_name in {dtype_names}:
    with forced_config(128, 256, 1, 1):
        check_dense(dtype_name, "nt", "same", "c", 200, 520, 136, device="cuda")
        check_dense(dtype_name, "nt", "same", "c16", 200, 520, 136, device="cuda")
    with forced_config(192, 96, 1, 1):
        check_dense(dtype_name, "tn", "same", None, 200, 200, 136, device="cuda")
        check_dense(dtype_name, "tn", "fp32", "d", 200, 190, 136, device="cuda")  # FP32 staged in halves
    with forced_config(64, 128, 1, 2):
        check_dense(dtype_name, "tt", "fp32", "d", 130, 200, 136, device="cuda")
    with forced_config(64, 16, 1, 1):
        check_dense(dtype_name, "nt", "same", None, 90, 520, 2048, device="cuda")
    for letters in LETTERS:
        check_dense(dtype_name, letters, "fp32", "c", 130, 72, 136, spare_columns=1, device="cuda")
        check_dense(dtype_name, letters, "fp32", "d", 130, 71, 136, device="cuda")
        check_dense(dtype_name, letters, "same", "d", 130, 71, 136, device="cuda")
        check_dense(dtype_name, letters, "same", None, 65, 24, 64, device="cuda")
    for letters in ("nt", "nn"):
        for psum in (False, True):
            check_contiguous(dtype_name, letters, "same", psum, [5, 0, 130], 3, 72, 136, device="cuda")
    check_masked(dtype_name, "fp32", [0, 65, 130], 130, 72, 136, device="cuda")
    check_k_grouped(dtype_name, "d", [128, 0, 256], 24, 40, device="cuda")
torch.cuda.synchronize()
"""


def test_compute_sanitizer_memcheck_is_clean(tmp_path):
    assert_sanitizer_clean(SANITIZER_PROGRAM.format(dtype_names=list(DTYPES)), tmp_path)


def test_compute_sanitizer_racecheck_is_clean(tmp_path):
    # The kernels of the two dtypes share their shared-memory pipeline; racecheck, far slower, follows one.
    assert_sanitizer_clean(SANITIZER_PROGRAM.format(dtype_names=["bf16"]), tmp_path, tool="racecheck")
