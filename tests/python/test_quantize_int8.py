"""The INT8 quantizers on CPU tensors: bit for bit against the torch reference of the same arithmetic
(quantize_int8_reference.py) for every quantizer, input dtype, odd shape and stack, the documented special values,
the layouts, the errors, the torch.ops.fgemm ops (opcheck, FakeTensor and meta, torch.compile), and an INT8 GEMM fed
with the results."""

import math
import random

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import fgemm
from quantize_int8_reference import (
    AMAX_FLOOR,
    INVERSE_MAX_CODE,
    assert_same_codes,
    per_block,
    per_row,
    per_token_group,
)
from quantize_reference import assert_same_scales, random_input

DTYPES = [torch.bfloat16, torch.float16, torch.float32]
GROUP_SIZES = [32, 64, 128]
FLOOR_SCALE = torch.tensor(AMAX_FLOOR, dtype=torch.float32) * INVERSE_MAX_CODE


def random_shapes(count, seed, rows_choices):
    rng = random.Random(seed)
    return [(rng.choice(rows_choices), rng.choice([1, 16, 100, 128, 130, 200, 300, 1000, 2048])) for _ in range(count)]


def assert_same(actual, expected, what=""):
    assert_same_codes(actual[0], expected[0], what)
    assert_same_scales(actual[1], expected[1], what)


def gen(seed):
    return torch.Generator().manual_seed(seed)


# ---- bit for bit against the reference --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,k", random_shapes(6, seed=1, rows_choices=[1, 3, 64, 200]) + [(1, 7168), (5, 100)])
def test_per_token_matches_reference(m, k, dtype):
    x = random_input((m, k), dtype, gen(m * 10007 + k))
    codes, scales = fgemm.per_token_cast_to_int8(x)
    assert codes.is_contiguous() and scales.shape == (m,)
    assert_same((codes, scales), per_row(x), f"for [{m}, {k}] {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,k", random_shapes(6, seed=2, rows_choices=[1, 100, 128, 300]))
def test_per_channel_matches_reference(n, k, dtype):
    w = random_input((n, k), dtype, gen(n * 10007 + k + 1))
    codes, scales = fgemm.per_channel_cast_to_int8(w)
    assert scales.shape == (n,)
    assert_same((codes, scales), per_row(w), f"for [{n}, {k}] {dtype}")


@pytest.mark.parametrize("group_size", GROUP_SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,k", random_shapes(4, seed=3, rows_choices=[1, 7, 200]) + [(3, 40), (2, 100)])
def test_per_token_group_matches_reference(m, k, dtype, group_size):
    x = random_input((m, k), dtype, gen(m * 10007 + k + group_size))
    codes, scales = fgemm.per_token_group_cast_to_int8(x, group_size)
    assert scales.shape == (m, math.ceil(k / group_size)) and scales.is_contiguous()
    assert_same((codes, scales), per_token_group(x, group_size), f"for [{m}, {k}] {dtype} groups of {group_size}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,k", random_shapes(6, seed=4, rows_choices=[1, 100, 128, 200, 300]))
def test_per_block_matches_reference(n, k, dtype):
    w = random_input((n, k), dtype, gen(n * 10007 + k + 2))
    codes, scales = fgemm.per_block_cast_to_int8(w)
    assert scales.shape == (math.ceil(n / 128), math.ceil(k / 128))
    assert_same((codes, scales), per_block(w), f"for [{n}, {k}] {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_stacks_quantize_each_matrix(dtype):
    x = random_input((3, 70, 300), dtype, gen(5))
    for quantize, reference, scale_shape in [
        (fgemm.per_token_cast_to_int8, per_row, (3, 70)),
        (fgemm.per_channel_cast_to_int8, per_row, (3, 70)),
        (lambda t: fgemm.per_token_group_cast_to_int8(t, 64), lambda t: per_token_group(t, 64), (3, 70, 5)),
        (fgemm.per_block_cast_to_int8, per_block, (3, 1, 3)),
    ]:
        codes, scales = quantize(x)
        assert scales.shape == scale_shape
        assert_same((codes, scales), reference(x), f"scales {scale_shape}")


@pytest.mark.parametrize("dtype", [torch.float64, torch.float8_e4m3fn])
def test_other_float_inputs_quantize_as_float32(dtype):
    x = random_input((9, 260), torch.float32, gen(6), special_values=False).to(dtype)
    assert_same(fgemm.per_token_cast_to_int8(x), fgemm.per_token_cast_to_int8(x.float()))
    assert_same(fgemm.per_block_cast_to_int8(x), fgemm.per_block_cast_to_int8(x.float()))


def test_strided_inputs():
    wide = random_input((40, 520), torch.float16, gen(7))
    rows = wide[:, 8:264]  # a row stride of 520 elements, an offset of 8
    assert_same(fgemm.per_token_cast_to_int8(rows), per_row(rows))
    assert_same(fgemm.per_token_group_cast_to_int8(rows, 32), per_token_group(rows, 32))
    columns = wide[:, :256].t()  # last dimension not contiguous: copied first
    assert_same(fgemm.per_block_cast_to_int8(columns), per_block(columns))
    assert_same(fgemm.per_channel_cast_to_int8(columns), per_row(columns))


@pytest.mark.parametrize("shape", [(37, 300), (4, 130, 1000), (1, 16), (0, 256)])
@pytest.mark.parametrize("group_size", GROUP_SIZES)
def test_mn_major_scales_equal_the_layout_of_the_row_major_ones(shape, group_size):
    x = random_input(shape, torch.bfloat16, gen(8))
    codes, scales = fgemm.per_token_group_cast_to_int8(x, group_size, mn_major_scales=True)
    row_major_codes, row_major_scales = fgemm.per_token_group_cast_to_int8(x, group_size)
    *lead, m, k = shape
    aligned_m = fgemm.get_tma_aligned_size(m, 4)
    kb = math.ceil(k / group_size)
    assert scales.shape == (*lead, m, kb)
    if m > 0:
        assert scales.stride() == ((1, aligned_m) if not lead else (aligned_m * kb, 1, aligned_m))
    assert_same_codes(codes, row_major_codes)
    assert_same_scales(scales, fgemm.get_mn_major_tma_aligned_tensor(row_major_scales))


# ---- the documented arithmetic -----------------------------------------------------------------------------

def test_special_values():
    x = torch.randn(6, 200, generator=gen(9))
    x[0, 5] = float("nan")  # row 0: NaN scale, codes 0
    x[1, 130] = float("inf")  # row 1: scale inf, codes 0
    x[2, 7] = -float("inf")  # row 2: likewise
    x[2, 9] = float("nan")  # and a NaN besides: NaN scale
    x[3] = 0.0  # row 3: the floor's scale, codes 0
    x[4] = -0.0
    x[5] *= 1e-11  # row 5: magnitudes below the floor: scaled by 127 / 1e-10, not by 127 / amax
    codes, scales = fgemm.per_token_cast_to_int8(x)
    assert scales[0].isnan() and scales[2].isnan()
    assert scales[1] == float("inf")
    assert scales[3] == scales[4] == scales[5] == FLOOR_SCALE
    assert (codes[:5] == 0).all()
    assert 0 < codes[5].abs().max() < 127
    assert not scales[5:].isnan().any()
    # The finite rows' codes come from the same arithmetic as any other's.
    assert_same((codes, scales), per_row(x))


def test_all_quantizers_treat_a_nan_block_alike():
    x = torch.randn(130, 300, generator=gen(10))
    x[129, 299] = float("nan")  # the last block of every quantizer
    for codes, scales in [fgemm.per_token_cast_to_int8(x), fgemm.per_token_group_cast_to_int8(x, 32),
                          fgemm.per_block_cast_to_int8(x)]:
        assert scales.flatten()[-1].isnan() and scales.isnan().sum() == 1
        assert (codes[129, 288:] == 0).all()
    codes, _ = fgemm.per_block_cast_to_int8(x)
    assert (codes[128:, 256:] == 0).all() and (codes[:128] != 0).any()


def test_ties_round_to_even():
    # amax = 127 makes 127 * (1 / amax) exactly 1, so each code is its element rounded.
    x = torch.tensor([[127.0, 0.5, 1.5, 2.5, -2.5, 3.5, -3.5, 126.5, -126.5, 64.5]])
    codes, scales = fgemm.per_token_cast_to_int8(x)
    assert codes.tolist() == [[127, 0, 2, 2, -2, 4, -4, 126, -126, 64]]
    assert scales.item() == torch.tensor(127.0) * INVERSE_MAX_CODE


@pytest.mark.parametrize("dtype", DTYPES)
def test_codes_are_symmetric_and_the_largest_magnitude_becomes_127(dtype):
    x = random_input((50, 1000), dtype, gen(11), special_values=False)
    for codes, _ in [fgemm.per_token_cast_to_int8(x), fgemm.per_channel_cast_to_int8(-x)]:
        assert codes.min() >= -127 and codes.max() <= 127
        assert (codes.abs().amax(dim=1) == 127).all()
    codes, _ = fgemm.per_token_cast_to_int8(-x.abs())
    assert (codes.min(dim=1).values == -127).all()  # -128 never


def test_dequantized_values_lie_within_half_a_scale():
    x = random_input((64, 700), torch.float32, gen(12), special_values=False)
    for codes, scales, blocks in [(*fgemm.per_token_cast_to_int8(x), lambda s: s.unsqueeze(-1)),
                                  (*fgemm.per_token_group_cast_to_int8(x, 64),
                                   lambda s: s.repeat_interleave(64, dim=1)[:, :700])]:
        step = blocks(scales)
        # Half a step, and the few units in the last place by which 127 * (1 / amax) and amax * (1 / 127) miss
        # being each other's inverses.
        assert ((codes.float() * step - x).abs() <= (0.5 + 1e-4) * step).all()


def test_rows_of_no_columns_get_the_floors_scale():
    codes, scales = fgemm.per_token_cast_to_int8(torch.empty(4, 0))
    assert codes.shape == (4, 0) and (scales == FLOOR_SCALE).all()
    codes, scales = fgemm.per_channel_cast_to_int8(torch.empty(2, 3, 0, dtype=torch.bfloat16))
    assert scales.shape == (2, 3) and (scales == FLOOR_SCALE).all()
    assert fgemm.per_token_group_cast_to_int8(torch.empty(4, 0))[1].shape == (4, 0)
    assert fgemm.per_block_cast_to_int8(torch.empty(0, 300))[1].shape == (0, 3)
    assert fgemm.per_token_cast_to_int8(torch.empty(0, 5, 64))[1].shape == (0, 5)


# ---- errors -------------------------------------------------------------------------------------------------

def test_inputs_are_checked():
    with pytest.raises(TypeError, match="per_token_cast_to_int8: argument 'x' expected a torch.Tensor, got list"):
        fgemm.per_token_cast_to_int8([[1.0]])
    with pytest.raises(ValueError, match="per_channel_cast_to_int8: argument 'w' expected a floating-point tensor"):
        fgemm.per_channel_cast_to_int8(torch.zeros(4, 128, dtype=torch.int8))
    with pytest.raises(ValueError, match=r"per_block_cast_to_int8: argument 'w' .* of 2 or 3 dimensions"):
        fgemm.per_block_cast_to_int8(torch.zeros(128))
    x = torch.zeros(2, 128)
    with pytest.raises(ValueError, match="argument 'group_size' must be 32, 64 or 128, got 48"):
        fgemm.per_token_group_cast_to_int8(x, 48)
    with pytest.raises(TypeError, match="argument 'group_size' expected an int, got float"):
        fgemm.per_token_group_cast_to_int8(x, 64.0)
    with pytest.raises(TypeError, match="argument 'group_size' expected an int, got bool"):
        fgemm.per_token_group_cast_to_int8(x, True)
    with pytest.raises(TypeError, match="argument 'mn_major_scales' expected a bool"):
        fgemm.per_token_group_cast_to_int8(x, mn_major_scales=1)
    assert fgemm.per_token_group_cast_to_int8(x, 32)[1].shape == (2, 4)


def test_kernels_reject_bad_outputs():
    x = torch.zeros(4, 256, dtype=torch.bfloat16)
    codes = torch.empty(4, 256, dtype=torch.int8)
    with pytest.raises(TypeError, match=r"per_token_cast_to_int8: argument 'x_int8' expected dtype int8, got bfloat16"):
        fgemm._C.per_token_cast_to_int8(x, torch.empty(4, 256, dtype=torch.bfloat16), torch.empty(4))
    with pytest.raises(TypeError, match=r"per_token_cast_to_int8: argument 'x_int8' has dtype torch.uint8"):
        fgemm._C.per_token_cast_to_int8(x, torch.empty(4, 256, dtype=torch.uint8), torch.empty(4))
    with pytest.raises(ValueError, match=r"per_channel_cast_to_int8: argument 'sf' expected shape \[4\] \(\[N\]\)"):
        fgemm._C.per_channel_cast_to_int8(x, codes, torch.empty(4, 1))
    with pytest.raises(ValueError, match=r"per_token_group_cast_to_int8: argument 'sf' expected shape \[4, 4\]"):
        fgemm._C.per_token_group_cast_to_int8(x, codes, torch.empty(4, 2), 64)
    with pytest.raises(ValueError, match="per_token_group_cast_to_int8: argument 'group_size' must be 32, 64 or 128"):
        fgemm._C.per_token_group_cast_to_int8(x, codes, torch.empty(4, 1), 256)
    with pytest.raises(TypeError, match="per_token_group_cast_to_int8: argument 'group_size' expected an int"):
        fgemm._C.per_token_group_cast_to_int8(x, codes, torch.empty(4, 2), "128")
    with pytest.raises(ValueError, match=r"per_block_cast_to_int8: argument 'sf' expected shape \[1, 2\]"):
        fgemm._C.per_block_cast_to_int8(x, codes, torch.empty(4, 2))
    with pytest.raises(ValueError, match="argument 'sf' has elements that share memory"):
        fgemm._C.per_token_cast_to_int8(x, codes, torch.empty(1).expand(4))
    with pytest.raises(ValueError, match="argument 'x_int8' must be contiguous in its last dimension"):
        fgemm._C.per_token_cast_to_int8(x, torch.empty(256, 4, dtype=torch.int8).t(), torch.empty(4))
    with pytest.raises(ValueError, match="argument 'x_int8' must not overlap 'x' in memory"):
        fgemm._C.per_token_cast_to_int8(x, x.view(torch.int8)[:, :256], torch.empty(4))
    with pytest.raises(TypeError, match="argument 'w' expected dtype bfloat16, float16 or float32, got int32"):
        fgemm._C.per_block_cast_to_int8(torch.zeros(4, 256, dtype=torch.int32), codes, torch.empty(1, 2))


# ---- torch.ops.fgemm: opcheck, FakeTensor and meta, torch.compile ---------------------------------------

def test_opcheck():
    x = torch.randn(5, 300, generator=gen(13))
    ops = torch.ops.fgemm
    torch.library.opcheck(ops.per_token_cast_to_int8, (x,))
    torch.library.opcheck(ops.per_channel_cast_to_int8, (torch.randn(2, 5, 300, generator=gen(14)),))
    torch.library.opcheck(ops.per_token_group_cast_to_int8, (x, 64, False))
    torch.library.opcheck(ops.per_token_group_cast_to_int8, (x, 128, True))
    torch.library.opcheck(ops.per_block_cast_to_int8, (x.bfloat16(),))


def all_quantizers(x):
    return (fgemm.per_token_cast_to_int8(x) + fgemm.per_channel_cast_to_int8(x)
            + fgemm.per_token_group_cast_to_int8(x, 32) + fgemm.per_token_group_cast_to_int8(x, mn_major_scales=True)
            + fgemm.per_block_cast_to_int8(x))


def test_quantizers_on_fake_and_meta_tensors_give_the_eager_shapes():
    x = torch.randn(2, 5, 300)
    expected = [(t.shape, t.stride(), t.dtype) for t in all_quantizers(x)]
    with FakeTensorMode() as mode:
        fake = all_quantizers(mode.from_tensor(x))
    meta = all_quantizers(x.to("meta"))
    for outputs in (fake, meta):
        assert [(t.shape, t.stride(), t.dtype) for t in outputs] == expected
    assert all(t.is_meta for t in meta)


def test_an_active_dispatch_mode_sees_the_ops():
    class RecordOps(torch.utils._python_dispatch.TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    x = torch.randn(5, 300)
    with RecordOps() as mode:
        outputs = all_quantizers(x)
    for op in ("per_token_cast_to_int8", "per_channel_cast_to_int8", "per_token_group_cast_to_int8",
               "per_block_cast_to_int8"):
        assert f"fgemm.{op}.default" in mode.ops
    for actual, expected in zip(outputs, all_quantizers(x)):
        assert torch.equal(actual, expected)


def quantize_both(x, w):
    return (fgemm.per_token_cast_to_int8(x) + fgemm.per_token_group_cast_to_int8(x, 64, mn_major_scales=True)
            + fgemm.per_channel_cast_to_int8(w) + fgemm.per_block_cast_to_int8(w))


def test_compiled_quantizers_are_bit_identical_to_eager():
    torch._dynamo.reset()
    w = random_input((256, 300), torch.bfloat16, gen(15))
    compiled = torch.compile(quantize_both, fullgraph=True)
    for m in (5, 8):  # another M: recompiled or dynamic, still exact
        x = random_input((m, 300), torch.float32, gen(16 + m))
        compiled_outputs, eager_outputs = compiled(x, w), quantize_both(x, w)
        for i in range(0, len(eager_outputs), 2):  # (codes, scales) of each quantizer
            assert_same(compiled_outputs[i : i + 2], eager_outputs[i : i + 2], f"compiled against eager, M = {m}")
            assert compiled_outputs[i + 1].stride() == eager_outputs[i + 1].stride()


def test_quantized_outputs_are_constants_to_autograd_eager_and_compiled():
    x = torch.randn(5, 300, generator=gen(18), requires_grad=True)
    y = torch.randn(5, 300, generator=gen(19))

    def loss(x, y):  # the quantized copies are constants; the gradient flows through x * y alone
        outputs = all_quantizers(x)
        assert not any(t.requires_grad for t in outputs)
        return sum(t.float().sum() for t in outputs) + (x * y).sum()

    torch._dynamo.reset()
    for function in (loss, torch.compile(loss, fullgraph=True)):
        x.grad = None
        function(x, y).backward()
        assert torch.equal(x.grad, y)


# ---- an INT8 GEMM fed with the results -------------------------------------------------------------------

@pytest.mark.parametrize("recipe", ["per token and channel", "blocks"])
def test_gemm_fed_with_the_quantizers_outputs(recipe):
    m, n, k = 40, 256, 704  # K a multiple of 16 (the GEMM's rule), not of 128
    x = random_input((m, k), torch.bfloat16, gen(20), special_values=False)  # rows of magnitudes 2^-24 .. 2^12
    w = torch.randn(n, k, generator=gen(21)).bfloat16()  # one magnitude, which a block's scale suits
    if recipe == "blocks":
        a, b = fgemm.per_token_group_cast_to_int8(x), fgemm.per_block_cast_to_int8(w)
        reference_a, reference_b = per_token_group(x), per_block(w)
    else:
        a, b = fgemm.per_token_cast_to_int8(x), fgemm.per_channel_cast_to_int8(w)
        reference_a, reference_b = per_row(x), per_row(w)
    d, d_reference = torch.empty(m, n), torch.empty(m, n)
    fgemm.int8_gemm_nt(a, b, d)
    fgemm.int8_gemm_nt(reference_a, reference_b, d_reference)
    assert torch.equal(d, d_reference)
    x64, w64 = x.double(), w.double()
    rows = x64.abs().amax(dim=1, keepdim=True)  # each row of d relative to its own magnitude
    assert fgemm.calc_diff(d / rows, (x64 @ w64.t()) / rows) < 1e-3
