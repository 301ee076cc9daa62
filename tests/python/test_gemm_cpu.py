"""fp8_gemm_nt on the CPU against the definition of ARCHITECTURE.md, Semantics, in float64."""

import random

import pytest
import torch

import fgemm
from operands import activations, assert_matches, nan_poisoned_slice, outside, reference_gemm, weights


def _random_shapes(count, seed):
    rng = random.Random(seed)
    return [(rng.randint(1, 200), 8 * rng.randint(1, 200), 16 * rng.randint(1, 100)) for _ in range(count)]


# (M, N, K): edge cases, sizes past the CPU backend's blocking, then random shapes. N is a multiple of 8 so
# that a contiguous BF16 D is allowed.
SHAPES = [(1, 128, 128), (1, 8, 16), (3, 24, 144), (129, 136, 400), (2, 1024, 128), (64, 2048, 2048),
          (130, 1544, 528)] + _random_shapes(6, seed=1)
OUT_DTYPES = [torch.bfloat16, torch.float32]


def _run(m, n, k, out_dtype, seed, with_c=False, mn_major_sfa=False):
    gen = torch.Generator().manual_seed(seed)
    a, sfa = activations(m, k, gen)
    b, sfb = weights(n, k, gen)
    c = torch.randn(m, n, generator=gen) * 100 if with_c else None
    d = torch.full((m, n), float("nan"), dtype=out_dtype)
    sfa_arg = fgemm.get_mn_major_tma_aligned_tensor(sfa) if mn_major_sfa else sfa
    fgemm.fp8_gemm_nt((a, sfa_arg), (b, sfb), d, c)
    return d, reference_gemm(a, sfa, b, sfb, c)


@pytest.mark.parametrize("out_dtype", OUT_DTYPES)
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_matches_reference(m, n, k, out_dtype):
    d, reference = _run(m, n, k, out_dtype, seed=m * n + k)
    assert_matches(d, reference)
    if out_dtype == torch.float32:
        assert fgemm.calc_diff(d, reference) < 1e-6


@pytest.mark.parametrize("out_dtype", OUT_DTYPES)
@pytest.mark.parametrize("m,n,k", [(1, 8, 16), (77, 160, 272), (200, 64, 768)])
def test_accumulates_c(m, n, k, out_dtype):
    d, reference = _run(m, n, k, out_dtype, seed=3, with_c=True)
    assert_matches(d, reference)


@pytest.mark.parametrize("m,n,k", [(1, 8, 16), (5, 128, 256), (130, 96, 400)])
def test_mn_major_sfa_gives_the_same_result(m, n, k):
    d, reference = _run(m, n, k, torch.float32, seed=4, mn_major_sfa=True)
    assert_matches(d, reference)


@pytest.mark.parametrize("out_dtype", OUT_DTYPES)
@pytest.mark.parametrize("m,n,k", [(1, 1, 16), (33, 13, 144), (130, 200, 512)])
def test_writes_only_its_slice_of_a_larger_d(m, n, k, out_dtype):
    """D as a slice of a NaN-filled tensor: N needs no alignment then, and nothing outside D is touched."""
    gen = torch.Generator().manual_seed(5)
    a, sfa = activations(m, k, gen)
    b, sfb = weights(n, k, gen)
    storage, d = nan_poisoned_slice((m, n), out_dtype)
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
    assert_matches(d, reference_gemm(a, sfa, b, sfb))
    assert outside(storage, d).isnan().all()


def test_m_zero_leaves_everything_untouched():
    gen = torch.Generator().manual_seed(6)
    a, sfa = activations(0, 256, gen)
    b, sfb = weights(64, 256, gen)
    storage, d = nan_poisoned_slice((0, 64), torch.bfloat16)
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
    assert storage.isnan().all()


def test_deepgemm_keywords_that_fgemm_honours_are_accepted():
    gen = torch.Generator().manual_seed(7)
    a, sfa = activations(40, 256, gen)
    b, sfb = weights(64, 256, gen)
    reference = reference_gemm(a, sfa, b, sfb)
    for options in [
        {"recipe": (1, 128, 128)},
        {"recipe": [1, 128, 128]},
        {"recipe_a": (1, 128), "recipe_b": (128, 128)},
        {"compiled_dims": "mnk"},
        {"compiled_dims": ""},
        {"disable_ue8m0_cast": True},
        {"disable_ue8m0_cast": False},
    ]:
        d = torch.empty(40, 64)
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d, **options)
        assert_matches(d, reference)
