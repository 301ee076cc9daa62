"""The utilities: quantizers, calc_diff and the layout helpers."""

import math

import numpy as np
import pytest
import torch

import fgemm
from fgemm.quantize import per_block_dequantize, per_token_dequantize

FP8_MAX = 448.0
# E4M3 keeps 3 mantissa bits: a normal value is off by at most 2^-4 of itself; a subnormal (below 2^-6) by at
# most half its step of 2^-9, relative to the block's scale.
FP8_RELATIVE_ERROR = 2.0**-4
FP8_SUBNORMAL_ERROR = 2.0**-10


def assert_within_fp8_precision(restored, original, scale_per_element):
    bound = FP8_RELATIVE_ERROR * original.abs() + FP8_SUBNORMAL_ERROR * scale_per_element
    assert ((restored - original).abs() <= bound).all()


@pytest.mark.parametrize("shape", [(1, 128), (5, 200), (64, 1024), (3, 7, 130), (0, 256)])
def test_per_token_cast_round_trip(shape):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(1)) * 10
    x_fp8, sfa = fgemm.per_token_cast_to_fp8(x)
    *lead, k = shape
    assert x_fp8.dtype == torch.float8_e4m3fn and x_fp8.shape == x.shape and x_fp8.is_contiguous()
    assert sfa.dtype == torch.float32 and sfa.shape == (*lead, math.ceil(k / 128)) and sfa.is_contiguous()
    scale_per_element = sfa.repeat_interleave(128, dim=-1)[..., :k]
    assert_within_fp8_precision(per_token_dequantize(x_fp8, sfa), x, scale_per_element)


def test_per_token_scale_is_block_amax_over_448():
    x = torch.randn(6, 300, generator=torch.Generator().manual_seed(2))
    x[2, 128:256] = 0  # an all-zero block takes the floor of 1e-4
    x_fp8, sfa = fgemm.per_token_cast_to_fp8(x)
    for kb, cols in enumerate([slice(0, 128), slice(128, 256), slice(256, 300)]):
        amax = x[:, cols].abs().amax(dim=1).clamp(min=1e-4)
        torch.testing.assert_close(sfa[:, kb], amax / FP8_MAX)
    assert sfa[2, 1] == pytest.approx(1e-4 / FP8_MAX)
    assert (x_fp8[2, 128:256].float() == 0).all()
    # The largest magnitude of each block lands on E4M3's largest value.
    assert x_fp8[0, :128].float().abs().max() == FP8_MAX


@pytest.mark.parametrize("shape", [(128, 128), (200, 300), (1, 16), (2, 136, 256)])
def test_per_block_cast_round_trip(shape):
    w = torch.randn(shape, generator=torch.Generator().manual_seed(3))
    w_fp8, sfb = fgemm.per_block_cast_to_fp8(w)
    *lead, n, k = shape
    assert w_fp8.dtype == torch.float8_e4m3fn and w_fp8.shape == w.shape and w_fp8.is_contiguous()
    assert sfb.dtype == torch.float32 and sfb.shape == (*lead, math.ceil(n / 128), math.ceil(k / 128))
    scale_per_element = sfb.repeat_interleave(128, dim=-2).repeat_interleave(128, dim=-1)[..., :n, :k]
    assert_within_fp8_precision(per_block_dequantize(w_fp8, sfb), w, scale_per_element)


def test_per_block_scale_is_block_amax_over_448():
    w = torch.randn(200, 300, generator=torch.Generator().manual_seed(4))
    _, sfb = fgemm.per_block_cast_to_fp8(w)
    for nb, rows in enumerate([slice(0, 128), slice(128, 200)]):
        for kb, cols in enumerate([slice(0, 128), slice(128, 256), slice(256, 300)]):
            assert sfb[nb, kb] == pytest.approx(w[rows, cols].abs().max().item() / FP8_MAX)


def test_quantizers_reject_bad_input():
    with pytest.raises(TypeError, match="argument 'x'"):
        fgemm.per_token_cast_to_fp8(np.zeros((2, 128)))
    with pytest.raises(ValueError, match="argument 'x'"):
        fgemm.per_token_cast_to_fp8(torch.zeros(128))
    with pytest.raises(ValueError, match="argument 'w'"):
        fgemm.per_block_cast_to_fp8(torch.zeros(4, 128, dtype=torch.int32))


def test_calc_diff():
    gen = torch.Generator().manual_seed(5)
    x, y = torch.randn(100, 30, generator=gen), torch.randn(100, 30, generator=gen)
    assert fgemm.calc_diff(x, x) == pytest.approx(0.0, abs=1e-15)
    assert fgemm.calc_diff(x, -x) == pytest.approx(2.0)
    assert fgemm.calc_diff(x, 2 * x) == pytest.approx(0.2)  # 1 - 2 * 2 / (1 + 4)
    xn, yn = x.numpy().astype(np.float64), y.numpy().astype(np.float64)
    expected = 1 - 2 * (xn * yn).sum() / (xn * xn + yn * yn).sum()
    assert fgemm.calc_diff(x, y) == pytest.approx(expected, rel=1e-12)
    assert fgemm.calc_diff(torch.zeros(3), torch.zeros(3)) == 0.0
    assert 1e-7 < fgemm.calc_diff(x.bfloat16(), x) < 1e-5


def test_calc_diff_is_computed_in_float64():
    # In float32, 1 - 2xy/(x^2+y^2) of two values 1e-5 apart rounds to 0.
    x = torch.ones(1000)
    assert fgemm.calc_diff(x, x + 1e-5) > 0


@pytest.mark.parametrize("x,element_size,aligned", [(0, 4, 0), (1, 4, 4), (4, 4, 4), (5, 4, 8), (3, 2, 8),
                                                    (17, 1, 32), (1, 16, 1), (7, 8, 8)])
def test_get_tma_aligned_size(x, element_size, aligned):
    assert fgemm.get_tma_aligned_size(x, element_size) == aligned


def test_get_tma_aligned_size_rejects_element_sizes_that_do_not_divide_16():
    with pytest.raises(ValueError, match="argument 'element_size'"):
        fgemm.get_tma_aligned_size(4, 3)


@pytest.mark.parametrize("shape,strides", [((5, 3), (1, 8)), ((8, 2), (1, 8)), ((1, 1), (1, 4)),
                                           ((2, 5, 3), (24, 1, 8))])
def test_mn_major_tma_aligned_tensor(shape, strides):
    sf = torch.randn(shape)
    aligned = fgemm.get_mn_major_tma_aligned_tensor(sf)
    assert aligned.shape == sf.shape and aligned.stride() == strides
    assert torch.equal(aligned, sf)
    assert fgemm.get_mn_major_tma_aligned_tensor(aligned) is aligned


def test_mn_major_tma_aligned_tensor_of_no_rows():
    assert fgemm.get_mn_major_tma_aligned_tensor(torch.ones(0, 2)).shape == (0, 2)


def test_mn_major_tma_aligned_tensor_rejects_bad_input():
    with pytest.raises(TypeError, match="argument 'sf'"):
        fgemm.get_mn_major_tma_aligned_tensor([[1.0]])
    with pytest.raises(ValueError, match="argument 'sf'"):
        fgemm.get_mn_major_tma_aligned_tensor(torch.ones(4))


def test_col_major_is_the_earlier_name_of_mn_major():
    assert fgemm.get_col_major_tma_aligned_tensor is fgemm.get_mn_major_tma_aligned_tensor


def test_alignment_helpers():
    assert fgemm.get_m_alignment_for_contiguous_layout() == 128
    assert fgemm.get_mk_alignment_for_contiguous_layout() == 128
    assert [fgemm.ceil_div(x, 128) for x in (0, 1, 128, 129)] == [0, 1, 1, 2]


@pytest.mark.parametrize("recipe,is_sfa", [((1, 128, 128), True), ((1, 128), None)])
@pytest.mark.parametrize("num_groups", [None, 3])
def test_transform_sf_of_a_is_mn_major_tma_aligned(recipe, is_sfa, num_groups):
    lead = () if num_groups is None else (num_groups,)
    sfa = torch.rand(*lead, 5, 3, generator=torch.Generator().manual_seed(6)) + 0.5  # M = 5, K = 300
    out = fgemm.transform_sf_into_required_layout(sfa, 5, 300, recipe, num_groups=num_groups, is_sfa=is_sfa)
    assert torch.equal(out, sfa)
    assert out.stride() == ((1, 8) if num_groups is None else (24, 1, 8))


@pytest.mark.parametrize("recipe,is_sfa", [((1, 128, 128), False), ((128, 128), None)])
def test_transform_sf_of_b_is_returned_as_is(recipe, is_sfa):
    sfb = torch.rand(2, 3, 4)  # G = 2, N = 300, K = 512
    assert fgemm.transform_sf_into_required_layout(sfb, 300, 512, recipe, 2, is_sfa, True) is sfb


def test_transform_sf_output_feeds_the_gemm():
    gen = torch.Generator().manual_seed(7)
    a = torch.randn(40, 256, generator=gen)
    b = torch.randn(24, 256, generator=gen)
    (a_fp8, sfa), (b_fp8, sfb) = fgemm.per_token_cast_to_fp8(a), fgemm.per_block_cast_to_fp8(b)
    sfa_t = fgemm.transform_sf_into_required_layout(sfa, 40, 256, (1, 128, 128), is_sfa=True)
    sfb_t = fgemm.transform_sf_into_required_layout(sfb, 24, 256, (1, 128, 128), is_sfa=False)
    d, d_ref = torch.empty(40, 24, dtype=torch.bfloat16), torch.empty(40, 24, dtype=torch.bfloat16)
    fgemm.fp8_gemm_nt((a_fp8, sfa_t), (b_fp8, sfb_t), d)
    fgemm.fp8_gemm_nt((a_fp8, sfa), (b_fp8, sfb), d_ref)
    assert torch.equal(d, d_ref)


@pytest.mark.parametrize("args,kwargs,error,match", [
    ((torch.ones(1, 3), 5, 300, (1, 32, 128)), {"is_sfa": False}, ValueError, "argument 'recipe'.*32 x 128"),
    ((torch.ones(5, 3), 5, 300, (1, 128, 32)), {"is_sfa": True}, ValueError, "argument 'recipe'.*1 x 32"),
    ((torch.ones(5, 3), 5, 300, (1, 128, 128)), {}, TypeError, "argument 'is_sfa'"),
    ((torch.ones(5, 3), 5, 300, (1, 128)), {"is_sfa": True}, ValueError, "argument 'is_sfa'"),
    ((torch.ones(5, 3), 5, 300, (1, 128, 128, 1)), {"is_sfa": True}, ValueError, "argument 'recipe'"),
    ((torch.ones(5, 3), 5, 300, "1x128"), {"is_sfa": True}, TypeError, "argument 'recipe'"),
    ((torch.ones(5, 3, dtype=torch.int32), 5, 300, (1, 128)), {}, TypeError, "argument 'sf'.*float32"),
    (([[1.0]], 1, 128, (1, 128)), {}, TypeError, "argument 'sf'"),
    ((torch.ones(5, 2), 5, 300, (1, 128)), {}, ValueError, r"argument 'sf' expected shape \[5, 3\]"),
    ((torch.ones(5, 3), 5, 300, (1, 128)), {"num_groups": 2}, ValueError, r"argument 'sf' expected shape \[2, 5, 3\]"),
    ((torch.ones(5, 3), 5, 300, (1, 128)), {"num_groups": 0}, ValueError, "argument 'num_groups'"),
    ((torch.ones(5, 3), -5, 300, (1, 128)), {}, ValueError, "argument 'mn'"),
    ((torch.ones(5, 3), 5, 300.0, (1, 128)), {}, ValueError, "argument 'k'"),
    ((torch.ones(5, 3), 5, 300, (1, 128)), {"disable_ue8m0_cast": 1}, TypeError, "argument 'disable_ue8m0_cast'"),
])
def test_transform_sf_rejects_what_fgemm_does_not_implement(args, kwargs, error, match):
    with pytest.raises(error, match="fgemm.transform_sf_into_required_layout: " + match):
        fgemm.transform_sf_into_required_layout(*args, **kwargs)


def test_num_sms_round_trip():
    fgemm.set_num_sms(7)
    try:
        assert fgemm.get_num_sms() == 7
    finally:
        fgemm.set_num_sms(0)


def test_pdl_is_off_by_default_and_round_trips():
    assert fgemm.get_pdl() is False
    fgemm.set_pdl(True)
    try:
        assert fgemm.get_pdl() is True
    finally:
        fgemm.set_pdl(False)
    assert fgemm.get_pdl() is False


@pytest.mark.parametrize("config", [(64, 16, 0, 0, 0, 0, -1), (64, 0), (64, 16, 1, 0), (-64, 16)])
def test_a_forced_configuration_of_negative_or_half_given_sizes_is_refused(config):
    with pytest.raises(ValueError, match="forced configuration has positive sizes, or zeros"):
        fgemm._C._force_config(*config)
