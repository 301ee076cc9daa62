"""The quantizers and the scale-layout copy on CPU tensors: bit for bit against the torch reference of the same
arithmetic (quantize_reference.py), the documented special values, the options, and the errors."""

import math
import random

import pytest
import torch

import fgemm
from quantize_reference import (
    AMAX_FLOOR,
    INVERSE_E4M3_MAX,
    assert_same_codes,
    assert_same_scales,
    is_nan_code,
    per_block,
    per_token,
    random_input,
)

DTYPES = [torch.bfloat16, torch.float32]


def random_shapes(count, seed, rows_choices):
    rng = random.Random(seed)
    return [(rng.choice(rows_choices), rng.choice([16, 100, 128, 130, 200, 300, 1000, 2048])) for _ in range(count)]


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,k", random_shapes(6, seed=1, rows_choices=[1, 3, 64, 200]) + [(1, 7168), (5, 100)])
def test_per_token_matches_reference(m, k, dtype, use_ue8m0):
    x = random_input((m, k), dtype, torch.Generator().manual_seed(m * 10007 + k))
    codes, scales = fgemm.per_token_cast_to_fp8(x, use_ue8m0=use_ue8m0)
    expected_codes, expected_scales = per_token(x, use_ue8m0)
    assert codes.is_contiguous() and scales.is_contiguous()
    assert_same_codes(codes, expected_codes, f"for [{m}, {k}] {dtype}")
    assert_same_scales(scales, expected_scales, f"for [{m}, {k}] {dtype}")


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,k", random_shapes(6, seed=2, rows_choices=[1, 100, 128, 200, 300]))
def test_per_block_matches_reference(n, k, dtype, use_ue8m0):
    w = random_input((n, k), dtype, torch.Generator().manual_seed(n * 10007 + k))
    codes, scales = fgemm.per_block_cast_to_fp8(w, use_ue8m0=use_ue8m0)
    expected_codes, expected_scales = per_block(w, use_ue8m0)
    assert_same_codes(codes, expected_codes, f"for [{n}, {k}] {dtype}")
    assert_same_scales(scales, expected_scales, f"for [{n}, {k}] {dtype}")


def test_grouped_inputs_quantize_each_group():
    gen = torch.Generator().manual_seed(3)
    x = random_input((3, 70, 300), torch.bfloat16, gen)
    codes, scales = fgemm.per_token_cast_to_fp8(x)
    assert scales.shape == (3, 70, 3)
    assert_same_codes(codes, per_token(x)[0])
    assert_same_scales(scales, per_token(x)[1])
    w = random_input((2, 200, 260), torch.float32, gen)
    codes, scales = fgemm.per_block_cast_to_fp8(w, use_ue8m0=True)
    assert scales.shape == (2, 2, 3)
    assert_same_codes(codes, per_block(w, True)[0])
    assert_same_scales(scales, per_block(w, True)[1])


@pytest.mark.parametrize("dtype", [torch.float16, torch.float64])
def test_other_float_inputs_quantize_as_float32(dtype):
    x = random_input((9, 260), dtype, torch.Generator().manual_seed(4))
    codes, scales = fgemm.per_token_cast_to_fp8(x)
    expected_codes, expected_scales = fgemm.per_token_cast_to_fp8(x.float())
    assert_same_codes(codes, expected_codes)
    assert_same_scales(scales, expected_scales)


def test_strided_inputs():
    gen = torch.Generator().manual_seed(5)
    wide = random_input((40, 520), torch.bfloat16, gen)
    rows = wide[:, 8:264]  # a row stride of 520 elements, an offset of 8
    assert_same_codes(fgemm.per_token_cast_to_fp8(rows)[0], per_token(rows)[0])
    columns = wide[:, :256].t()  # last dimension not contiguous: copied first
    assert_same_codes(fgemm.per_block_cast_to_fp8(columns)[0], per_block(columns)[0])


@pytest.mark.parametrize("shape", [(37, 300), (4, 130, 1000), (1, 16), (0, 256)])
def test_mn_major_scales_equal_the_layout_of_the_row_major_ones(shape):
    x = random_input(shape, torch.bfloat16, torch.Generator().manual_seed(6))
    codes, scales = fgemm.per_token_cast_to_fp8(x, mn_major_scales=True)
    row_major_codes, row_major_scales = fgemm.per_token_cast_to_fp8(x)
    *lead, m, k = shape
    aligned_m = fgemm.get_tma_aligned_size(m, 4)
    kb = math.ceil(k / 128)
    assert scales.shape == (*lead, m, kb)
    if m > 0:
        assert scales.stride() == ((1, aligned_m) if not lead else (aligned_m * kb, 1, aligned_m))
    assert_same_codes(codes, row_major_codes)
    assert_same_scales(scales, fgemm.get_mn_major_tma_aligned_tensor(row_major_scales))


def test_ue8m0_scales_are_the_least_powers_of_two_above_the_plain_scales():
    x = random_input((50, 1000), torch.float32, torch.Generator().manual_seed(7), special_values=False)
    _, plain = fgemm.per_token_cast_to_fp8(x)
    _, powers = fgemm.per_token_cast_to_fp8(x, use_ue8m0=True)
    mantissas, _ = torch.frexp(powers)
    assert (mantissas == 0.5).all()
    assert (powers >= plain).all() and (powers / 2 < plain).all()


def test_ue8m0_rounds_a_scale_just_above_a_power_of_two_up():
    # The least amax whose plain scale exceeds 2^-7: an FP32 log2 of such a scale can round to -7 exactly
    # (DeepGEMM's reference then takes 2^-7); the exact exponent is -6.
    amax = torch.tensor(3.5)
    while amax * INVERSE_E4M3_MAX <= 2.0**-7:
        amax = torch.nextafter(amax, torch.tensor(4.0))
    x = torch.zeros(1, 128)
    x[0, 0] = amax
    _, plain = fgemm.per_token_cast_to_fp8(x)
    _, power = fgemm.per_token_cast_to_fp8(x, use_ue8m0=True)
    assert 2.0**-7 < plain.item() < 2.0**-7 * (1 + 2.0**-21)
    assert power.item() == 2.0**-6


def test_special_values():
    x = torch.randn(4, 384, generator=torch.Generator().manual_seed(8))
    x[0, 5] = float("nan")  # block (0, 0): NaN scale and codes
    x[1, 130] = float("inf")  # block (1, 1): scale inf, the inf NaN, the rest 0
    x[1, 131] = -float("inf")
    x[2, 256:] = 0.0  # block (2, 2): the floor of 1e-4
    codes, scales = fgemm.per_token_cast_to_fp8(x)
    assert scales[0, 0].isnan() and is_nan_code(codes[0, :128]).all()
    assert not scales[0, 1:].isnan().any() and not is_nan_code(codes[0, 128:]).any()
    assert scales[1, 1] == float("inf")
    assert is_nan_code(codes[1, 130:132]).all()
    finite = torch.ones(128, dtype=torch.bool)
    finite[2:4] = False
    assert (codes[1, 128:256].float()[finite] == 0).all()
    assert scales[2, 2] == torch.tensor(AMAX_FLOOR) * INVERSE_E4M3_MAX
    assert (codes[2, 256:].float() == 0).all()
    # Negative zero stays negative.
    assert codes[2, 256:].view(torch.uint8).eq(0).all()
    x[3, :128] = -0.0
    assert fgemm.per_token_cast_to_fp8(x)[0][3, :128].view(torch.uint8).eq(0x80).all()


def test_largest_magnitude_of_each_block_becomes_448():
    x = torch.randn(6, 300, generator=torch.Generator().manual_seed(9))
    codes, scales = fgemm.per_token_cast_to_fp8(x)
    for kb, cols in enumerate([slice(0, 128), slice(128, 256), slice(256, 300)]):
        assert (codes[:, cols].float().abs().amax(dim=1) == 448).all()
        torch.testing.assert_close(scales[:, kb], x[:, cols].abs().amax(dim=1) / 448, rtol=2**-22, atol=0)


@pytest.mark.parametrize("shape", [(5, 3), (70, 56), (3, 40, 7), (1, 1)])
def test_copy_scales_into_mn_major(shape):
    sf = torch.randn(shape, generator=torch.Generator().manual_seed(10))
    aligned = fgemm.get_mn_major_tma_aligned_tensor(sf)
    assert torch.equal(aligned, sf)
    back = torch.empty(shape)
    fgemm._C.copy_scales(aligned, back)
    assert torch.equal(back, sf)


def test_quantizer_options_are_checked():
    x = torch.zeros(2, 128)
    with pytest.raises(TypeError, match="argument 'use_ue8m0' expected a bool"):
        fgemm.per_token_cast_to_fp8(x, use_ue8m0=1)
    with pytest.raises(TypeError, match="argument 'mn_major_scales' expected a bool"):
        fgemm.per_token_cast_to_fp8(x, mn_major_scales="yes")
    with pytest.raises(ValueError, match="argument 'gran_k' must be 128"):
        fgemm.per_block_cast_to_fp8(x, gran_k=64)
    assert fgemm.per_token_cast_to_fp8(x, False, 128)[1].shape == (2, 1)  # DeepGEMM's positional order


def test_kernels_reject_bad_outputs():
    x = torch.zeros(4, 256, dtype=torch.bfloat16)
    codes = torch.empty(4, 256, dtype=torch.float8_e4m3fn)
    scales = torch.empty(4, 2)
    with pytest.raises(TypeError, match=r"per_token_cast_to_fp8: argument 'x_fp8' expected dtype float8_e4m3fn"):
        fgemm._C.per_token_cast_to_fp8(x, torch.empty(4, 256, dtype=torch.bfloat16), scales, False)
    with pytest.raises(ValueError, match=r"argument 'sf' expected shape \[4, 2\]"):
        fgemm._C.per_token_cast_to_fp8(x, codes, torch.empty(4, 3), False)
    with pytest.raises(ValueError, match=r"per_block_cast_to_fp8: argument 'sf' expected shape \[1, 2\]"):
        fgemm._C.per_block_cast_to_fp8(x, codes, scales, False)
    with pytest.raises(ValueError, match="argument 'sf' has elements that share memory"):
        fgemm._C.per_token_cast_to_fp8(x, codes, torch.empty(4, 1).expand(4, 2), False)
    with pytest.raises(ValueError, match="argument 'x_fp8' must be contiguous in its last dimension"):
        fgemm._C.per_token_cast_to_fp8(x, torch.empty(256, 4, dtype=torch.float8_e4m3fn).t(), scales, False)
    with pytest.raises(ValueError, match="argument 'x_fp8' must not overlap 'x' in memory"):
        fgemm._C.per_token_cast_to_fp8(x, x.view(torch.float8_e4m3fn)[:, :256], scales, False)
    with pytest.raises(TypeError, match="argument 'x' expected dtype bfloat16 or float32, got int32"):
        fgemm._C.per_token_cast_to_fp8(torch.zeros(4, 256, dtype=torch.int32), codes, scales, False)
    with pytest.raises(ValueError, match=r"argument 'out' expected shape \[4, 2\]"):
        fgemm._C.copy_scales(scales, torch.empty(2, 4))
    with pytest.raises(TypeError, match="argument 'sf' expected dtype float32"):
        fgemm.get_mn_major_tma_aligned_tensor(torch.zeros(5, 2, dtype=torch.bfloat16))
