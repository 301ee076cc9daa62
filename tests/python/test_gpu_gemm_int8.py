"""The INT8 GEMMs on the GPU (checks_int8.py): the exact INT32 product bit for bit against int64 sums, the scaled
recipes (per token and channel, per tensor, DeepSeek's blocks) against float64, M from 0 to 5000 and N, K off
the tiles' multiples, every output dtype, C and bias of each type, the grouped layouts with empty groups and
padding, the masked layout replayed from a CUDA graph with new counts, and compute-sanitizer's memcheck and
racecheck on small shapes of each kernel kind."""

import random

import pytest
import torch

import fgemm
from checks_int8 import (
    OUT_DTYPES,
    check_contiguous,
    check_exact,
    check_masked,
    check_masked_rows,
    check_normal,
    masked_operands,
)
from operands import nan_poisoned_slice
from printed_kernels import run_printing_kernels
from sanitizer import assert_sanitizer_clean

pytestmark = pytest.mark.gpu

RECIPES = ["token", "token2d", "tensor", "block"]
_RNG = random.Random(2026)
M_VALUES = [0, 1, 64, 127, 4097] + [_RNG.randint(0, 5000) for _ in range(3)]


@pytest.mark.parametrize("extremes", [False, True])
def test_exact_matches_int64_sums(extremes):
    for m, n, k in [(1, 8, 16), (127, 1001, 784), (4097, 200, 4112), (300, 4100, 7168)]:
        check_exact(m, n, k, "cuda", extremes=extremes, spare_columns=m % 2)


def test_exact_wraps_as_int32():
    # 131088 products of -128 * -128 sum to 2^31 + 2^18: past the int32 range, wrapped as torch._int_mm does.
    a = torch.full((65, 131088), -128, dtype=torch.int8, device="cuda")
    b = torch.full((72, 131088), -128, dtype=torch.int8, device="cuda")
    d = torch.empty(65, 72, dtype=torch.int32, device="cuda")
    fgemm.int8_gemm_nt(a, b, d)
    assert (d == -(2**31) + 2**18).all()


@pytest.mark.parametrize("out", list(OUT_DTYPES))
@pytest.mark.parametrize("recipe", RECIPES)
def test_every_recipe_and_output(recipe, out):
    for m in M_VALUES:
        check_normal(recipe, out, m, n=1001, k=784, device="cuda", spare_columns=m % 2)


@pytest.mark.parametrize("recipe", RECIPES)
@pytest.mark.parametrize("out,c_mode,bias_dtype", [
    ("bf16", None, torch.float32), ("bf16", None, torch.bfloat16), ("fp16", None, torch.float16),
    ("fp32", "c", None), ("fp32", "d", torch.float32), ("bf16", "c", torch.bfloat16), ("fp16", "c", torch.float32),
    ("bf16", "d", None), ("fp16", "c16", torch.float16),
])
def test_bias_and_c(recipe, out, c_mode, bias_dtype):
    for m, n, k in [(1, 24, 16), (129, 1001, 784), (2049, 2112, 7168)]:
        check_normal(recipe, out, m, n, k, "cuda", c_mode=c_mode, bias_dtype=bias_dtype)


def random_cases(count, seed):
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        m = rng.choice([1, 63, 65, 129, 1000, 2049, 5000, rng.randint(0, 5000)])
        n = rng.choice([8, 24, 100, 200, 1000, 2112, 4097, rng.randint(1, 4100)])
        k = 16 * rng.randint(1, 300) if i % 3 else rng.choice([16, 112, 144, 4112, 7168])
        cases.append((RECIPES[i % 4], list(OUT_DTYPES)[i // 4 % 3], m, n, k, i % 2 == 1))
    return cases


@pytest.mark.parametrize("recipe,out,m,n,k,extremes", random_cases(36, seed=8))
def test_random_shapes(recipe, out, m, n, k, extremes):
    check_normal(recipe, out, m, n, k, "cuda", extremes=extremes)


@pytest.mark.parametrize("use_psum_layout", [False, True])
@pytest.mark.parametrize("recipe", RECIPES)
def test_m_grouped_contiguous(recipe, use_psum_layout):
    rng = random.Random(len(recipe) + use_psum_layout)
    for rows_per_group, tail, n, k in [([0, 300, 1, 128, 0, 777], 5, 1001, 784), ([1], 0, 24, 16),
                                       ([0, 0, 4097], 127, 200, 4112),
                                       ([rng.randint(0, 600) for _ in range(8)], rng.randint(0, 200), 2112, 7168)]:
        check_contiguous(recipe, "bf16", rows_per_group, tail, n, k, "cuda", use_psum_layout)


@pytest.mark.parametrize("out", list(OUT_DTYPES))
@pytest.mark.parametrize("recipe", RECIPES)
def test_m_grouped_masked(recipe, out):
    for masked_m, m_max, n, k in [([0, 1, 64, 127, 300], 300, 1001, 784), ([0], 16, 8, 16),
                                  ([4097, 5000], 5000, 200, 272), ([17, 0, 129, 1], 130, 4097, 7168)]:
        check_masked(recipe, out, masked_m, m_max, n, k, "cuda")


@pytest.mark.parametrize("recipe", ["token", "block"])
def test_masked_cuda_graph_replays_with_new_counts(recipe):
    groups, m_max, n, k = 4, 576, 1000, 784
    a, sa, b, sb = masked_operands(recipe, [m_max] * groups, m_max, n, k, "cuda")
    counts = torch.zeros(groups, dtype=torch.int32, device="cuda")
    storage, d = nan_poisoned_slice((groups, m_max, n), torch.bfloat16, "cuda")
    fgemm.m_grouped_int8_gemm_nt_masked((a, sa), (b, sb), d, counts, 128)  # compiled before the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fgemm.m_grouped_int8_gemm_nt_masked((a, sa), (b, sb), d, counts, 128)
    for masked_m in ([0, 1, 300, 576], [129, 0, 0, 64], [576, 576, 17, 200]):
        d.fill_(float("nan"))
        counts.copy_(torch.tensor(masked_m, dtype=torch.int32))
        graph.replay()
        torch.cuda.synchronize()
        check_masked_rows(recipe, a, sa, b, sb, d, masked_m)


# Decode shapes of the block recipe whose 64-row tiles have their two math warpgroups take alternate K blocks
# (TileConfig::alternate_k_blocks; M <= 128, the K blocks a multiple of four, no ring of C): each output type, a
# bias of each type, FP32 accumulated into D in place, and, with 64 x 16 tiles forced, several tiles a CTA. Run with
# the configurations printed, so that the test knows each kernel alternates.
ALTERNATING_PROGRAM = """
import contextlib, torch
from checks_int8 import check_normal
from gpu_reference import forced_config
for m, n, k, out, c_mode, bias_dtype, tile in [(1, 1000, 2048, "bf16", None, None, None),
                                               (64, 256, 512, "fp32", "d", torch.float32, None),
                                               (33, 2112, 7168, "bf16", None, torch.bfloat16, None),
                                               (128, 4100, 1024, "fp16", None, torch.float16, None),
                                               (128, 8200, 1024, "bf16", None, torch.float32, (64, 16))]:
    with forced_config(*tile, 1, 1) if tile else contextlib.nullcontext():
        check_normal("block", out, m, n, k, "cuda", c_mode=c_mode, bias_dtype=bias_dtype)
    print(f"case {m} {n} {k} {out} passed", flush=True)
"""


def test_block_decode_tiles_alternate_k_blocks(tmp_path):
    cases, kernels = run_printing_kernels(ALTERNATING_PROGRAM, tmp_path)
    assert len(cases) == 5, cases
    assert len(kernels) == 5 and all("int8_block" in name and name.endswith("_alt") for name in kernels), kernels


def test_same_bits_every_call():
    for recipe in RECIPES:
        gen = torch.Generator(device="cuda").manual_seed(5)
        a = torch.randint(-128, 128, (300, 2048), generator=gen, device="cuda", dtype=torch.int8)
        b = torch.randint(-128, 128, (1000, 2048), generator=gen, device="cuda", dtype=torch.int8)
        sa = torch.rand(300, 16, generator=gen, device="cuda") if recipe == "block" else torch.rand(300, device="cuda")
        sb = torch.rand(8, 16, generator=gen, device="cuda") if recipe == "block" else torch.rand(1000, device="cuda")
        first = torch.empty(300, 1000, dtype=torch.bfloat16, device="cuda")
        fgemm.int8_gemm_nt((a, sa), (b, sb), first)
        for _ in range(5):
            again = torch.empty_like(first)
            fgemm.int8_gemm_nt((a, sa), (b, sb), again)
            assert torch.equal(again, first)


# ---- compute-sanitizer on small shapes of every kind --------------------------------------------------------

SANITIZED_PROGRAM = """
import torch
from checks_int8 import check_contiguous, check_exact, check_masked, check_normal
check_exact(130, 72, 272, "cuda")
for recipe in ("token", "tensor", "block"):
    check_normal(recipe, "bf16", 130, 200, 272, "cuda", c_mode="c", bias_dtype=torch.bfloat16)
    check_normal(recipe, "fp32", 65, 72, 144, "cuda")
    check_normal(recipe, "fp16", 65, 72, 144, "cuda", c_mode="d")
    check_contiguous(recipe, "fp16", [0, 100, 3], 7, 72, 272, "cuda")
    check_masked(recipe, "bf16", [0, 5, 64], 64, 72, 272, "cuda")
check_normal("block", "bf16", 64, 256, 512, "cuda", bias_dtype=torch.float32)  # alternate K blocks
"""


@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
def test_sanitizer(tmp_path, tool):
    assert_sanitizer_clean(SANITIZED_PROGRAM, tmp_path, tool)
