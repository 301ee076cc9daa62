"""The INT8 GEMMs on the CPU backend (checks_int8.py): the exact INT32 product bit for bit, every scaled recipe
and output dtype against float64, C and bias, odd shapes, the grouped layouts with empty groups and padding,
and the extremes -128 and 127."""

import random

import pytest
import torch

from checks_int8 import OUT_DTYPES, check_contiguous, check_exact, check_masked, check_normal

RECIPES = ["token", "token2d", "tensor", "block"]


@pytest.mark.parametrize("extremes", [False, True])
def test_exact_matches_int64_sums(extremes):
    for m, n, k in [(0, 8, 16), (1, 8, 16), (37, 200, 784), (130, 72, 4112)]:
        check_exact(m, n, k, "cpu", extremes=extremes, spare_columns=m % 2)


@pytest.mark.parametrize("out", list(OUT_DTYPES))
@pytest.mark.parametrize("recipe", RECIPES)
def test_every_recipe_and_output(recipe, out):
    for m, n, k in [(0, 24, 16), (1, 1001, 784), (65, 72, 144), (300, 200, 2064)]:
        check_normal(recipe, out, m, n, k, "cpu", spare_columns=m % 2)


@pytest.mark.parametrize("recipe", RECIPES)
@pytest.mark.parametrize("out,c_mode,bias_dtype", [
    ("bf16", None, torch.float32), ("bf16", "c", torch.bfloat16), ("fp16", None, torch.float16),
    ("fp32", "c", None), ("fp32", "d", torch.float32), ("bf16", "d", None), ("fp16", "c16", torch.float16),
])
def test_bias_and_c(recipe, out, c_mode, bias_dtype):
    for m, n, k in [(1, 24, 16), (129, 1001, 784)]:
        check_normal(recipe, out, m, n, k, "cpu", c_mode=c_mode, bias_dtype=bias_dtype)


def test_extremes_and_random_shapes():
    rng = random.Random(26)
    for i in range(12):
        m, n, k = rng.randint(0, 300), rng.randint(1, 600), 16 * rng.randint(1, 70)
        check_normal(RECIPES[i % 4], list(OUT_DTYPES)[i % 3], m, n, k, "cpu", extremes=i % 2 == 1)


@pytest.mark.parametrize("use_psum_layout", [False, True])
@pytest.mark.parametrize("recipe", RECIPES)
def test_m_grouped_contiguous(recipe, use_psum_layout):
    for rows_per_group, tail, n, k in [([0, 300, 1, 128, 0, 77], 5, 201, 784), ([1], 0, 24, 16)]:
        check_contiguous(recipe, "bf16", rows_per_group, tail, n, k, "cpu", use_psum_layout)


@pytest.mark.parametrize("recipe", RECIPES)
def test_m_grouped_masked(recipe):
    for masked_m, m_max, n, k in [([0, 1, 64, 127, 130], 130, 201, 784), ([0], 16, 8, 16)]:
        check_masked(recipe, "fp16", masked_m, m_max, n, k, "cpu")
