"""fp8_gemm_nt on a Hopper GPU: correctness against FP64 references on the seed shapes and random shapes."""

import random
import threading

import pytest
import torch

import fgemm
from fgemm.bench.tables import load_table
from gpu_reference import MAX_DIFF, forced_config, random_operands, reference_gemm
from printed_kernels import run_printing_kernels
from sanitizer import assert_sanitizer_clean

pytestmark = pytest.mark.gpu

# The 18 normal shapes of the seed table (fgemm.bench's built-in "seed"), written out as the tests' parameters.
NORMAL_SEED_SHAPES = [
    (m, n, k)
    for m in (64, 128, 4096)
    for n, k in ((2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048))
]


def poisoned(shape, dtype):
    return torch.full(shape, float("nan"), dtype=dtype, device="cuda")


def row_width(n, dtype):
    """The least width >= n whose rows start on 16-byte boundaries (the TMA rule)."""
    per_16_bytes = 16 // torch.tensor([], dtype=dtype).element_size()
    return -(-n // per_16_bytes) * per_16_bytes


def padded_rows(x):
    """x as a slice of a wider tensor whose rows start on 16-byte boundaries."""
    m, n = x.shape
    wide = torch.empty(m, row_width(n, x.dtype), dtype=x.dtype, device=x.device)
    wide[:, :n] = x
    return wide[:, :n]


def run_and_check(m, n, k, out_dtype=torch.bfloat16, with_c=False, pad_cols=0, pad_rows=0, sfa_mn_major=False):
    """Writes D into a NaN-poisoned slice of a larger tensor; checks the slice against FP64 and the rest untouched."""
    (a, sfa), (b, sfb) = random_operands(m, n, k)
    if sfa_mn_major:
        sfa = fgemm.get_mn_major_tma_aligned_tensor(sfa)
    c = padded_rows(torch.randn(m, n, device="cuda")) if with_c else None
    outer = poisoned((m + pad_rows, row_width(n + pad_cols, out_dtype)), out_dtype)
    d = outer[:m, :n]
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d, c=c)
    torch.cuda.synchronize()
    assert not torch.isnan(d).any(), f"unwritten or NaN outputs for M={m} N={n} K={k}"
    diff = fgemm.calc_diff(d, reference_gemm(a, sfa, b, sfb, c))
    assert diff < MAX_DIFF, f"calc_diff {diff:.2e} for M={m} N={n} K={k} {out_dtype} c={with_c}"
    outside = torch.ones_like(outer, dtype=torch.bool)
    outside[:m, :n] = False
    assert torch.isnan(outer[outside]).all(), f"memory beside D was written for M={m} N={n} K={k}"
    return d


@pytest.mark.parametrize("m,n,k", [(1, 16, 128), (300, 1001, 784), (129, 4097, 400), (4096, 7168, 2048)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_accumulation_in_place_gives_the_bits_of_a_separate_c(dtype, m, n, k):
    """C is D: an FP32 D is added to by the store (the TMA's reduction, or the row stores of a ragged edge); a BF16
    D, as DeepGEMM's c=d, is read through C's ring and rounded once from C + A·B. Either way the bits of a separate C
    of D's type, and nothing beside D is touched."""
    (a, sfa), (b, sfb) = random_operands(m, n, k)
    outer = poisoned((m + 3, row_width(n + 5, dtype)), dtype)
    d = outer[:m, :n]
    d.copy_(torch.randn(m, n, device="cuda") * 8)
    c = padded_rows(d.clone())
    separate = padded_rows(torch.full_like(c, float("nan")))
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), separate, c=c)
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d, c=d)
    torch.cuda.synchronize()
    assert fgemm.calc_diff(d, reference_gemm(a, sfa, b, sfb, c)) < MAX_DIFF
    assert torch.equal(d, separate), f"in place differs from a separate C for M={m} N={n} K={k}"
    outside = torch.ones_like(outer, dtype=torch.bool)
    outside[:m, :n] = False
    assert torch.isnan(outer[outside]).all(), f"memory beside D was written for M={m} N={n} K={k}"


def test_seed_table_lists_the_shapes_tested_here():
    table = load_table("seed")["normal"]
    assert sorted((s["m"], s["n"], s["k"]) for s in table) == sorted(NORMAL_SEED_SHAPES)


@pytest.mark.parametrize("sfa_mn_major", [True, False])
@pytest.mark.parametrize("m,n,k", NORMAL_SEED_SHAPES)
def test_seed_shapes(m, n, k, sfa_mn_major):
    run_and_check(m, n, k, sfa_mn_major=sfa_mn_major)


def random_shapes(count, seed):
    rng = random.Random(seed)
    shapes = []
    for i in range(count):
        m = rng.choice([1, 7, 63, 64, 65, 127, 129, 300, 1000, 2049, 4096, 5000, rng.randint(1, 5000)])
        n = rng.choice([16, 24, 72, 100, 127, 200, 1000, 2112, 4097, 7168, 19999, rng.randint(16, 20000)])
        k = 16 * rng.randint(1, 1024) if i % 3 else rng.choice([16, 112, 128, 144, 400, 7168, 16384])
        shapes.append((m, n, k, i % 2 == 1, i % 4 >= 2, i % 8 < 4))
    return shapes


@pytest.mark.parametrize("m,n,k,fp32_out,with_c,sfa_mn_major", random_shapes(36, seed=2026))
def test_random_shapes_in_a_padded_output(m, n, k, fp32_out, with_c, sfa_mn_major):
    run_and_check(m, n, k, torch.float32 if fp32_out else torch.bfloat16, with_c, pad_cols=9, pad_rows=3,
                  sfa_mn_major=sfa_mn_major)


# A problem of fewer rows than a tile loads only 8, 16 or 32 rows of A a stage (TileConfig::a_rows): each side of
# those edges, with C and FP32 out, in a padded output whose rows past M must stay untouched.
@pytest.mark.parametrize("m", [1, 7, 8, 9, 16, 17, 31, 32, 33])
@pytest.mark.parametrize("fp32_out,with_c", [(False, False), (True, True)])
def test_few_rows_of_a(m, fp32_out, with_c):
    run_and_check(m, 1000, 784, torch.float32 if fp32_out else torch.bfloat16, with_c, pad_cols=9, pad_rows=3)


@pytest.mark.parametrize("m,n,k", [(1, 2112, 7168), (333, 1000, 400), (4096, 7168, 2048)])
def test_mn_major_scales_give_the_same_bits(m, n, k):
    (a, sfa), (b, sfb) = random_operands(m, n, k)
    d_row = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    d_col = torch.empty_like(d_row)
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d_row)
    fgemm.fp8_gemm_nt((a, fgemm.get_mn_major_tma_aligned_tensor(sfa)), (b, sfb), d_col)
    assert torch.equal(d_row, d_col)


def mn_major_unaligned(sfa, offset):
    """sfa MN-major with columns of exactly M scales, starting `offset` floats into a buffer: for odd M or a
    nonzero offset, columns the TMA cannot load (they do not start on 16-byte boundaries)."""
    m, k_blocks = sfa.shape
    buffer = torch.empty(offset + m * k_blocks, dtype=sfa.dtype, device=sfa.device)
    view = buffer[offset:].view(k_blocks, m).t()
    view.copy_(sfa)
    return view


@pytest.mark.parametrize("m,offset", [(333, 0), (64, 1)])
def test_sfa_the_tma_cannot_load_gives_the_same_bits(m, offset):
    (a, sfa), (b, sfb) = random_operands(m, 1000, 1280)
    d_row = torch.empty(m, 1000, dtype=torch.bfloat16, device="cuda")
    d_other = poisoned(d_row.shape, d_row.dtype)
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d_row)
    fgemm.fp8_gemm_nt((a, mn_major_unaligned(sfa, offset)), (b, sfb), d_other)
    assert torch.equal(d_row, d_other)


# Decode shapes whose 64-row tiles have their two math warpgroups take alternate K blocks (TileConfig::
# alternate_k_blocks, which the heuristics choose for M <= 128 where the K blocks are a multiple of four): one round
# of stages and several, a ragged N, FP32 accumulated in place, sfa copied by the helper warp, and, with narrow tiles
# forced, several tiles a CTA (warpgroup 1's sums written again while warpgroup 0 may still read them). Run with the
# configurations printed, so that the test knows each kernel alternates.
ALTERNATING_PROGRAM = """
import contextlib, torch, fgemm
from gpu_reference import forced_config, random_operands, reference_gemm
for m, n, k, out, mn_major, tile in [(1, 1000, 2048, "bf16", True, None), (64, 256, 512, "fp32 in place", False, None),
                                     (33, 2112, 7168, "bf16", False, None),
                                     (128, 4100, 1024, "fp32 in place", True, None),
                                     (90, 6000, 512, "bf16", True, (64, 32)),
                                     (128, 8200, 1024, "bf16", False, (64, 16))]:
    (a, sfa), (b, sfb) = random_operands(m, n, k)
    if mn_major:
        sfa = fgemm.get_mn_major_tma_aligned_tensor(sfa)
    dtype = torch.float32 if out.startswith("fp32") else torch.bfloat16
    outer = torch.full((m + 3, n + 16), float("nan"), dtype=dtype, device="cuda")
    d = outer[:m, :n]
    c = None
    if out.endswith("in place"):
        d.copy_(torch.randn(m, n, device="cuda"))
        c = d
    reference = reference_gemm(a, sfa, b, sfb, None if c is None else c.clone())
    with forced_config(*tile, 1, 1) if tile else contextlib.nullcontext():
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d, c=c)
    torch.cuda.synchronize()
    diff = fgemm.calc_diff(d, reference)
    outside = torch.ones_like(outer, dtype=torch.bool)
    outside[:m, :n] = False
    print(f"case {m} {n} {k} {out} tile={tile}: calc_diff {diff:.3e}, nan {int(torch.isnan(d).sum())}, "
          f"beside D written {int((~torch.isnan(outer[outside])).sum())}", flush=True)
"""


def test_alternate_k_blocks_are_right(tmp_path):
    cases, kernels = run_printing_kernels(ALTERNATING_PROGRAM, tmp_path)
    assert len(cases) == 6, cases
    for line in cases:
        diff = float(line.split("calc_diff ")[1].split(",")[0])
        assert diff < MAX_DIFF and line.endswith("nan 0, beside D written 0"), line
    assert len(kernels) == 6 and all(name.endswith("_alt") for name in kernels), kernels


def test_results_are_deterministic():
    (a, sfa), (b, sfb) = random_operands(4096, 7168, 2048)
    d1 = torch.empty(4096, 7168, dtype=torch.bfloat16, device="cuda")
    d2 = poisoned(d1.shape, d1.dtype)
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d1)
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d2)
    assert torch.equal(d1, d2)


def test_fewer_sms_give_the_same_result():
    (a, sfa), (b, sfb) = random_operands(1000, 3000, 1024)
    full = torch.empty(1000, 3000, dtype=torch.bfloat16, device="cuda")
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), full)
    try:
        fgemm.set_num_sms(17)
        assert fgemm.get_num_sms() == 17
        few = poisoned(full.shape, full.dtype)
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), few)
    finally:
        fgemm.set_num_sms(0)
    assert torch.equal(full, few)


# A forced stage count (for measuring) changes how often the ring of stages turns over, not the arithmetic: the
# same tile gives the same bits with fewer stages than its own. The alternating tiles of M <= 128 take multiples of
# four.
@pytest.mark.parametrize("m,n,k,tile,stages", [(33, 2112, 7168, (64, 32), 8), (128, 4104, 1024, (64, 16), 4),
                                               (1000, 3000, 1024, (128, 128), 4), (200, 1000, 640, (64, 64), 5)])
def test_fewer_stages_give_the_same_result(m, n, k, tile, stages):
    (a, sfa), (b, sfb) = random_operands(m, n, k)
    own = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    with forced_config(*tile, 1, 1):
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), own)
    fewer = poisoned(own.shape, own.dtype)
    with forced_config(*tile, 1, 1, 0, 0, stages):
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), fewer)
    assert torch.equal(own, fewer)
    assert fgemm.calc_diff(own, reference_gemm(a, sfa, b, sfb)) < MAX_DIFF


def test_two_threads_on_two_streams_agree():
    operands = [random_operands(777, 2112, 7168) for _ in range(2)]
    expected = []
    for (a, sfa), (b, sfb) in operands:
        d = torch.empty(777, 2112, dtype=torch.bfloat16, device="cuda")
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
        expected.append(d)
    results = [poisoned((777, 2112), torch.bfloat16) for _ in range(2)]
    errors = []

    def work(index):
        try:
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                (a, sfa), (b, sfb) = operands[index]
                for _ in range(20):
                    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), results[index])
            stream.synchronize()
        except Exception as error:  # surfaced below: a thread's exception would otherwise be lost
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    for got, want in zip(results, expected):
        assert torch.equal(got, want)


def test_capture_in_a_cuda_graph():
    (a, sfa), (b, sfb) = random_operands(256, 4096, 7168)
    d = poisoned((256, 4096), torch.bfloat16)
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)  # compile outside the capture
    d.fill_(float("nan"))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
    graph.replay()
    torch.cuda.synchronize()
    assert fgemm.calc_diff(d, reference_gemm(a, sfa, b, sfb)) < MAX_DIFF


def test_scales_on_the_host_are_refused():
    (a, sfa), (b, sfb) = random_operands(64, 256, 256)
    d = torch.empty(64, 256, dtype=torch.bfloat16, device="cuda")
    with pytest.raises(ValueError, match="sfa"):
        fgemm.fp8_gemm_nt((a, sfa.cpu()), (b, sfb), d)


MEMCHECK_PROGRAM = """
import torch, fgemm
from gpu_reference import MAX_DIFF, random_operands, reference_gemm
for m, n, k in [(1, 24, 16), (65, 200, 144), (130, 1000, 400), (64, 256, 512)]:
    (a, sfa), (b, sfb) = random_operands(m, n, k)
    d = torch.empty(m, n + 8, dtype=torch.float32, device="cuda")[:, :n]
    c = torch.randn(m, n, device="cuda")
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d, c=c)
    torch.cuda.synchronize()
    assert fgemm.calc_diff(d, reference_gemm(a, sfa, b, sfb, c)) < 1e-3
    # C is D, N + 1 columns (ragged: the row stores add to D too)
    d = torch.empty(m, n + 8, dtype=torch.float32, device="cuda")[:, :n + 1]
    d.copy_(torch.randn(m, n + 1, device="cuda"))
    (a, sfa), (b, sfb) = random_operands(m, n + 1, k)
    reference = reference_gemm(a, sfa, b, sfb, d.clone())
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d, c=d)
    torch.cuda.synchronize()
    assert fgemm.calc_diff(d, reference) < 1e-3
    # C of D's type (BF16), apart from D and D itself
    d = torch.empty(m, n + 8, dtype=torch.bfloat16, device="cuda")[:, :n + 1]
    d.copy_(torch.randn(m, n + 1, device="cuda"))
    reference = reference_gemm(a, sfa, b, sfb, d.clone())
    apart, c = (torch.empty(m, n + 8, dtype=torch.bfloat16, device="cuda")[:, :n + 1] for _ in range(2))
    c.copy_(d)
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), apart, c=c)
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d, c=d)
    torch.cuda.synchronize()
    assert fgemm.calc_diff(d, reference) < 1e-3 and torch.equal(d, apart)
"""


def test_compute_sanitizer_memcheck_is_clean(tmp_path):
    assert_sanitizer_clean(MEMCHECK_PROGRAM, tmp_path)


# Small shapes (racecheck follows every shared-memory access): one K block and several, a ragged N, C, C as D
# (FP32, and BF16 through C's ring), both sfa layouts (the TMA's and the helper warp's), both output types, a
# cluster, and alternate K blocks (64 x 256 x 512 in place).
RACECHECK_PROGRAM = """
import contextlib, torch, fgemm
from gpu_reference import forced_config, random_operands, reference_gemm
for m, n, k, out, mn_major, config in [(64, 128, 128, "bf16", True, None), (130, 200, 512, "fp32 + c", False, None),
                                       (64, 256, 512, "fp32 in place", False, None),
                                       (130, 264, 256, "fp32 in place", True, None),
                                       (130, 264, 256, "bf16 in place", False, None),
                                       (200, 256, 384, "bf16", True, (128, 256, 1, 1)),
                                       (256, 128, 256, "bf16", True, (128, 64, 2, 1))]:
    (a, sfa), (b, sfb) = random_operands(m, n, k)
    d = torch.empty(m, n, dtype=torch.float32 if out.startswith("fp32") else torch.bfloat16, device="cuda")
    c = torch.randn(m, n, device="cuda").to(d.dtype) if out != "bf16" else None
    reference = reference_gemm(a, sfa, b, sfb, c)
    if out.endswith("in place"):
        d.copy_(c)
        c = d
    with forced_config(*config) if config else contextlib.nullcontext():
        fgemm.fp8_gemm_nt((a, fgemm.get_mn_major_tma_aligned_tensor(sfa) if mn_major else sfa), (b, sfb), d, c=c)
    torch.cuda.synchronize()
    assert fgemm.calc_diff(d, reference) < 1e-3
"""


def test_compute_sanitizer_racecheck_is_clean(tmp_path):
    assert_sanitizer_clean(RACECHECK_PROGRAM, tmp_path, tool="racecheck")
