"""The cast-transpose quantizers on CPU tensors: bit for bit against the torch reference of per_token_cast_to_fp8's
arithmetic on x and on its transpose (quantize_reference.py), edge shapes, special values, the scale layouts, the
grouped layout with empty experts, and the errors."""

import math
import random

import pytest
import torch

import fgemm
from quantize_reference import (
    assert_same_codes,
    assert_same_scales,
    cast_transpose,
    grouped_cast_transpose,
    is_nan_code,
    padded_to_blocks,
    random_input,
)

DTYPES = [torch.bfloat16, torch.float32]


def random_shapes(count, seed):
    rng = random.Random(seed)
    sizes = [1, 3, 16, 100, 128, 130, 200, 257, 300]
    return [(rng.choice(sizes), rng.choice(sizes)) for _ in range(count)]


SHAPES = [(1, 1), (1, 300), (300, 1), (128, 128), (129, 127), (256, 512)] + random_shapes(6, seed=31)


def assert_same(actual, expected, what=""):
    """Codes and scales, in the order (x_fp8, sf, xt_fp8, sft)."""
    assert len(actual) == len(expected) == 4
    for i, (a, e) in enumerate(zip(actual, expected)):
        check = assert_same_codes if i % 2 == 0 else assert_same_scales
        check(a, e, f"(output {i}) {what}")


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,k", SHAPES)
def test_matches_per_token_of_x_and_of_its_transpose(m, k, dtype, use_ue8m0):
    x = random_input((m, k), dtype, torch.Generator().manual_seed(m * 10007 + k))
    out = fgemm.cast_transpose_to_fp8(x, use_ue8m0=use_ue8m0)
    assert_same(out, cast_transpose(x, use_ue8m0), f"for [{m}, {k}] {dtype}")
    assert out[0].is_contiguous() and out[2].is_contiguous()
    assert out[2].shape == (k, m) and out[3].shape == (k, math.ceil(m / 128))
    # The same bits as fgemm's own per-token quantizer of each.
    assert_same(out, fgemm.per_token_cast_to_fp8(x, use_ue8m0) + fgemm.per_token_cast_to_fp8(x.t(), use_ue8m0))


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,k", SHAPES)
def test_per_block_matches_per_block_of_the_weight_and_of_its_transpose(n, k, dtype, use_ue8m0):
    x = random_input((n, k), dtype, torch.Generator().manual_seed(n * 10009 + k))
    out = fgemm.per_block_cast_transpose_to_fp8(x, use_ue8m0)
    assert_same(out, fgemm.per_block_cast_to_fp8(x, use_ue8m0) + fgemm.per_block_cast_to_fp8(x.t(), use_ue8m0),
                f"for [{n}, {k}] {dtype}")
    assert all(t.is_contiguous() for t in out)
    assert out[2].shape == (k, n) and out[3].shape == (math.ceil(k / 128), math.ceil(n / 128))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("g,n,k", [(1, 128, 128), (3, 200, 130), (2, 1, 300), (4, 257, 16)])
def test_per_block_of_a_stack_is_that_of_each_matrix(g, n, k, dtype):
    # A magnitude of its own per matrix, so that a scale taken from the wrong one shows.
    x = random_input((g, n, k), dtype, torch.Generator().manual_seed(g * 101 + n + k))
    x *= (16.0 ** torch.arange(g)).to(dtype)[:, None, None]
    out = fgemm.per_block_cast_transpose_to_fp8(x)
    assert [t.shape for t in out] == [(g, n, k), (g, math.ceil(n / 128), math.ceil(k / 128)), (g, k, n),
                                     (g, math.ceil(k / 128), math.ceil(n / 128))]
    assert all(t.is_contiguous() for t in out)
    for i in range(g):
        assert_same([t[i] for t in out], fgemm.per_block_cast_to_fp8(x[i]) + fgemm.per_block_cast_to_fp8(x[i].t()),
                    f"matrix {i} of [{g}, {n}, {k}] {dtype}")


def test_per_block_of_no_rows_or_no_columns():
    for n, k in ((0, 300), (300, 0)):
        out = fgemm.per_block_cast_transpose_to_fp8(torch.randn(n, k))
        assert [t.shape for t in out] == [(n, k), (math.ceil(n / 128), math.ceil(k / 128)), (k, n),
                                         (math.ceil(k / 128), math.ceil(n / 128))]
    out = fgemm.per_block_cast_transpose_to_fp8(torch.randn(0, 256, 128))
    assert [t.shape for t in out] == [(0, 256, 128), (0, 2, 1), (0, 128, 256), (0, 1, 2)]


def test_per_block_checks_its_arguments():
    with pytest.raises(ValueError, match="per_block_cast_transpose_to_fp8: argument 'x'"):
        fgemm.per_block_cast_transpose_to_fp8(torch.randn(2, 2, 128, 128))
    with pytest.raises(TypeError, match="per_block_cast_transpose_to_fp8: argument 'use_ue8m0'"):
        fgemm.per_block_cast_transpose_to_fp8(torch.randn(128, 128), use_ue8m0=1)


@pytest.mark.parametrize("mn_major_scales", [False, True])
def test_scale_layouts(mn_major_scales):
    m, k = 37, 300
    x = random_input((m, k), torch.bfloat16, torch.Generator().manual_seed(32))
    out = fgemm.cast_transpose_to_fp8(x, mn_major_scales=mn_major_scales)
    assert_same(out, cast_transpose(x))
    sf, sft = out[1], out[3]
    if mn_major_scales:
        assert sf.stride() == (1, fgemm.get_tma_aligned_size(m, 4))
        assert sft.stride() == (1, fgemm.get_tma_aligned_size(k, 4))
    else:
        assert sf.is_contiguous() and sft.is_contiguous()


def test_outputs_of_any_layout_through_the_extension():
    m, k = 70, 260
    x = random_input((m, k), torch.float32, torch.Generator().manual_seed(33))
    codes = torch.empty(m, k + 12, dtype=torch.float8_e4m3fn)[:, 4 : k + 4]
    sf = torch.empty(3, m + 5)[:, 1 : m + 1].t()
    xt = torch.empty(k, m + 30, dtype=torch.float8_e4m3fn)[:, 30:]
    sft = torch.empty(k, 1)
    fgemm._C.cast_transpose_to_fp8(x, codes, sf, xt, sft, False)
    assert_same((codes, sf, xt, sft), cast_transpose(x))


def test_no_rows_or_no_columns():
    for shape in [(0, 256), (5, 0), (0, 0)]:
        x = torch.zeros(shape, dtype=torch.bfloat16)
        m, k = shape
        out = fgemm.cast_transpose_to_fp8(x)
        assert [tuple(t.shape) for t in out] == [(m, k), (m, math.ceil(k / 128)), (k, m), (k, math.ceil(m / 128))]


def test_special_values_of_columns():
    x = torch.randn(200, 3, generator=torch.Generator().manual_seed(34))
    x[5, 0] = float("nan")  # column 0, rows 0..127: NaN scale and codes; rows 128..199 unaffected
    x[130, 1] = float("inf")  # column 1, rows 128..199: scale inf, the inf NaN, the rest 0
    x[:128, 2] = 0.0  # column 2, rows 0..127: the floor of 1e-4
    _, sf, xt, sft = fgemm.cast_transpose_to_fp8(x, mn_major_scales=False)
    assert sft[0, 0].isnan() and is_nan_code(xt[0, :128]).all()
    assert not sft[0, 1].isnan() and not is_nan_code(xt[0, 128:]).any()
    assert sft[1, 1] == float("inf") and is_nan_code(xt[1, 130])
    finite = torch.ones(72, dtype=torch.bool)
    finite[2] = False
    assert (xt[1, 128:].float()[finite] == 0).all()
    assert sft[2, 0] == torch.tensor(1e-4) * (1 / 448) and (xt[2, :128].float() == 0).all()
    # Row-wise, the NaN and the infinity spoil their rows' blocks alone.
    assert sf[5, 0].isnan() and sf[130, 0] == float("inf") and not sf[6, 0].isnan()
    assert_same(fgemm.cast_transpose_to_fp8(x), cast_transpose(x))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float64])
def test_other_float_inputs_quantize_as_float32(dtype):
    x = random_input((9, 260), dtype, torch.Generator().manual_seed(35))
    assert_same(fgemm.cast_transpose_to_fp8(x), fgemm.cast_transpose_to_fp8(x.float()))


def test_strided_inputs():
    wide = random_input((140, 520), torch.bfloat16, torch.Generator().manual_seed(36))
    rows = wide[:, 8:264]  # a row stride of 520 elements, an offset of 8
    assert_same(fgemm.cast_transpose_to_fp8(rows), cast_transpose(rows))
    columns = wide[:, :256].t()  # last dimension not contiguous: copied first
    assert_same(fgemm.cast_transpose_to_fp8(columns), cast_transpose(columns))


# ---- grouped ----------------------------------------------------------------------------------------------

GROUPED = [([128], 100), ([0, 128, 0, 256, 128], 300), ([256, 0], 1), ([0, 0], 128), ([], 16), ([384, 128], 130)]


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ks,h", GROUPED)
def test_grouped_matches_each_experts_transpose(ks, h, dtype, use_ue8m0):
    x = random_input((sum(ks), h), dtype, torch.Generator().manual_seed(sum(ks) + h + len(ks)))
    out = fgemm.grouped_cast_transpose_to_fp8(x, ks, use_ue8m0=use_ue8m0)
    expected = grouped_cast_transpose(x, ks, use_ue8m0)
    assert_same(out, expected, f"for ks={ks}, H={h}, {dtype}")
    assert out[2].shape == (sum(ks) * h,) and out[3].shape == (h, sum(ks) // 128)
    # The row-wise outputs and the scales are those of the ungrouped operation.
    ungrouped = fgemm.cast_transpose_to_fp8(x, use_ue8m0=use_ue8m0)
    assert_same_codes(out[0], ungrouped[0])
    assert_same_scales(out[1], ungrouped[1])
    assert_same_scales(out[3], ungrouped[3])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ks,h", [([100, 0, 1, 300], 200), ([127], 64), ([129, 128], 16), ([0, 5], 300)])
def test_grouped_pads_each_expert_to_whole_blocks(ks, h, dtype):
    # Counts that are not multiples of 128: the outputs are those of x with each expert's rows followed by zero
    # rows up to a multiple of 128, as the grouped GEMMs' aligned layout holds them.
    x = random_input((sum(ks), h), dtype, torch.Generator().manual_seed(sum(ks) + h))
    padded, padded_counts = padded_to_blocks(x, ks)
    out = fgemm.grouped_cast_transpose_to_fp8(x, ks)
    assert_same(out, fgemm.grouped_cast_transpose_to_fp8(padded, padded_counts), f"for ks={ks}, H={h}, {dtype}")
    assert_same(out, grouped_cast_transpose(padded, padded_counts))


def test_grouped_many_experts_and_row_major_scales():
    ks = [128 * (g % 3) for g in range(40)]  # 40 experts, every third empty
    x = random_input((sum(ks), 200), torch.bfloat16, torch.Generator().manual_seed(37))
    out = fgemm.grouped_cast_transpose_to_fp8(x, tuple(ks), mn_major_scales=False)
    assert out[1].is_contiguous() and out[3].is_contiguous()
    assert_same(out, grouped_cast_transpose(x, ks))


def test_grouped_block_is_a_k_major_operand_of_each_expert():
    ks = [128, 256]
    x = random_input((384, 64), torch.float32, torch.Generator().manual_seed(38), special_values=False)
    _, _, xt, sft = fgemm.grouped_cast_transpose_to_fp8(x, ks)
    second = xt[128 * 64 :].view(64, 256)  # expert 1's [H, ks[1]] block
    codes, scales = fgemm.per_token_cast_to_fp8(x[128:].t())
    assert_same_codes(second, codes)
    assert_same_scales(sft[:, 1:], scales)


# ---- options and errors -----------------------------------------------------------------------------------

def test_options_are_checked():
    x = torch.zeros(128, 128)
    with pytest.raises(TypeError, match="cast_transpose_to_fp8: argument 'use_ue8m0' expected a bool"):
        fgemm.cast_transpose_to_fp8(x, use_ue8m0=1)
    with pytest.raises(TypeError, match="argument 'mn_major_scales' expected a bool"):
        fgemm.cast_transpose_to_fp8(x, mn_major_scales=None)
    with pytest.raises(ValueError, match="argument 'x' expected a floating-point tensor of 2 dimensions"):
        fgemm.cast_transpose_to_fp8(torch.zeros(2, 128, 128))
    with pytest.raises(TypeError, match="argument 'x' expected a torch.Tensor"):
        fgemm.grouped_cast_transpose_to_fp8([[1.0]], [128])
    with pytest.raises(TypeError, match="grouped_cast_transpose_to_fp8: argument 'ks' expected a list of ints"):
        fgemm.grouped_cast_transpose_to_fp8(x, torch.tensor([128]))
    with pytest.raises(TypeError, match="argument 'ks' expected an int"):
        fgemm.grouped_cast_transpose_to_fp8(x, [128.0])


def bf16(*shape):
    return torch.zeros(shape, dtype=torch.bfloat16)


def fp8(*shape):
    return torch.empty(shape, dtype=torch.float8_e4m3fn)


def valid_outputs(m=4, k=256):
    return [fp8(m, k), torch.empty(m, 2), fp8(k, m), torch.empty(k, 1)]


@pytest.mark.parametrize("position,argument,replacement,error,words", [
    (0, "x_fp8", bf16(4, 256), TypeError, "expected dtype float8_e4m3fn"),
    (1, "sf", torch.empty(4, 2, dtype=torch.bfloat16), TypeError, "expected dtype float32"),
    (2, "xt_fp8", fp8(4, 256), ValueError, r"expected shape \[256, 4\]"),
    (3, "sft", torch.empty(256, 2), ValueError, r"expected shape \[256, 1\]"),
    (1, "sf", torch.empty(4, 1).expand(4, 2), ValueError, "has elements that share memory"),
    (2, "xt_fp8", fp8(4, 256).t(), ValueError, "must be contiguous in its last dimension"),
])
def test_kernel_rejects_bad_outputs(position, argument, replacement, error, words):
    outputs = valid_outputs()
    outputs[position] = replacement
    with pytest.raises(error, match=f"cast_transpose_to_fp8: argument '{argument}' {words}"):
        fgemm._C.cast_transpose_to_fp8(bf16(4, 256), *outputs, False)


def test_kernel_rejects_bad_inputs_and_overlaps():
    with pytest.raises(TypeError, match="argument 'x' expected dtype bfloat16 or float32, got int32"):
        fgemm._C.cast_transpose_to_fp8(torch.zeros(4, 256, dtype=torch.int32), *valid_outputs(), False)
    with pytest.raises(ValueError, match=r"argument 'x' expected a 2-D tensor \[M, K\]"):
        fgemm._C.cast_transpose_to_fp8(bf16(1, 4, 256), *valid_outputs(), False)
    codes, sf, xt, sft = valid_outputs()
    with pytest.raises(ValueError, match="argument 'xt_fp8' must not overlap 'x_fp8' in memory"):
        fgemm._C.cast_transpose_to_fp8(bf16(4, 256), codes, sf, codes.view(256, 4), sft, False)
    with pytest.raises(ValueError, match="argument 'sft' must not overlap 'sf' in memory"):
        storage = torch.empty(300)
        fgemm._C.cast_transpose_to_fp8(bf16(4, 256), codes, storage[:8].view(4, 2), xt, storage[4:260].view(256, 1),
                                       False)
    with pytest.raises(ValueError, match="argument 'x_fp8' must not overlap 'x' in memory"):
        x = bf16(4, 256)
        fgemm._C.cast_transpose_to_fp8(x, x.view(torch.float8_e4m3fn)[:, :256], sf, xt, sft, False)


def grouped_outputs(rows=256, h=64):
    return [fp8(rows, h), torch.empty(rows, 1), fp8(rows * h), torch.empty(h, rows // 128)]


@pytest.mark.parametrize("ks,words", [
    ([-128, 384], r"expected non-negative counts, got ks\[0\] = -128"),
    ([-256], r"expected non-negative counts, got ks\[0\] = -256"),
    ([128], "sums to 128, but x has 256 rows"),
    ([128, 100, 29], "sums to 257, but x has 256 rows"),
])
def test_grouped_rejects_bad_counts(ks, words):
    with pytest.raises(ValueError, match=f"grouped_cast_transpose_to_fp8: argument 'ks' {words}"):
        fgemm._C.grouped_cast_transpose_to_fp8(bf16(256, 64), ks, *grouped_outputs(), False)
    with pytest.raises(ValueError, match=f"argument 'ks' {words}"):
        fgemm.grouped_cast_transpose_to_fp8(bf16(256, 64), ks)


def test_grouped_rejects_bad_outputs():
    codes, sf, xt, sft = grouped_outputs()
    x = bf16(256, 64)
    with pytest.raises(ValueError, match=r"argument 'xt_fp8' expected shape \[16384\]"):
        fgemm._C.grouped_cast_transpose_to_fp8(x, [128, 128], codes, sf, xt.view(64, 256), sft, False)
    with pytest.raises(ValueError, match=r"argument 'sft' expected shape \[64, 2\]"):
        fgemm._C.grouped_cast_transpose_to_fp8(x, [128, 128], codes, sf, xt, torch.empty(64, 1), False)
    with pytest.raises(ValueError, match="argument 'xt_fp8' must not overlap 'x_fp8' in memory"):
        fgemm._C.grouped_cast_transpose_to_fp8(x, [128, 128], codes, sf, codes.view(-1), sft, False)
    with pytest.raises(TypeError, match="argument 'ks' expected a list of ints, got int"):
        fgemm._C.grouped_cast_transpose_to_fp8(x, 256, codes, sf, xt, sft, False)
