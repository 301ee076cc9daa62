"""Every bad input of ARCHITECTURE.md (Semantics), passed through Python, raises ValueError or TypeError naming the
argument."""

import numpy as np
import pytest
import torch

import fgemm

FP8 = torch.float8_e4m3fn
M, N, K = 4, 256, 256


def normal_args():
    """Valid arguments of fp8_gemm_nt: (a, sfa), (b, sfb), d."""
    a = torch.zeros(M, K, dtype=FP8)
    b = torch.zeros(N, K, dtype=FP8)
    return [a, torch.ones(M, 2)], [b, torch.ones(2, 2)], torch.empty(M, N, dtype=torch.bfloat16)


def contiguous_args(groups=2):
    a = torch.zeros(M, K, dtype=FP8)
    b = torch.zeros(groups, N, K, dtype=FP8)
    lhs, rhs = [a, torch.ones(M, 2)], [b, torch.ones(groups, 2, 2)]
    return lhs, rhs, torch.empty(M, N, dtype=torch.bfloat16), torch.zeros(M, dtype=torch.int32)


def masked_args(groups=2):
    a = torch.zeros(groups, M, K, dtype=FP8)
    b = torch.zeros(groups, N, K, dtype=FP8)
    lhs, rhs = [a, torch.ones(groups, M, 2)], [b, torch.ones(groups, 2, 2)]
    return lhs, rhs, torch.empty(groups, M, N, dtype=torch.bfloat16), torch.zeros(groups, dtype=torch.int32)


def call_normal(lhs, rhs, d, **kwargs):
    fgemm.fp8_gemm_nt(tuple(lhs), tuple(rhs), d, **kwargs)


def expect(error, argument, call, *args, **kwargs):
    with pytest.raises(error, match=f"argument '{argument}'"):
        call(*args, **kwargs)


def row_padded(rows, cols, dtype, pad):
    """A [rows, cols] slice of a [rows, cols + pad] tensor: row stride cols + pad elements."""
    return torch.zeros(rows, cols + pad, dtype=dtype)[:, :cols]


# ---- dtypes ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "position,argument,dtype",
    [
        ((0, 0), "a", torch.bfloat16),
        ((0, 0), "a", torch.float16),  # a dtype fgemm takes nowhere
        ((1, 0), "b", torch.float32),
        ((0, 1), "sfa", torch.bfloat16),
        ((0, 1), "sfa", torch.float64),
        ((1, 1), "sfb", torch.int32),
    ],
)
def test_wrong_operand_dtype(position, argument, dtype):
    args = normal_args()
    pair, index = position
    args[pair][index] = args[pair][index].to(dtype)
    expect(TypeError, argument, call_normal, *args)


@pytest.mark.parametrize("dtype", [FP8, torch.float16, torch.int32])
def test_wrong_d_dtype(dtype):
    lhs, rhs, d = normal_args()
    expect(TypeError, "d", call_normal, lhs, rhs, d.to(dtype))


def test_wrong_c_dtype():
    lhs, rhs, d = normal_args()
    expect(TypeError, "c", call_normal, lhs, rhs, d, c=torch.zeros(M, N, dtype=torch.float16))
    expect(TypeError, "c", call_normal, lhs, rhs, d.float(), c=torch.zeros(M, N, dtype=torch.bfloat16))


# ---- shapes ---------------------------------------------------------------------------------------------

def test_mismatched_k():
    lhs, rhs, d = normal_args()
    rhs[0] = torch.zeros(N, K + 128, dtype=FP8)
    expect(ValueError, "b", call_normal, lhs, rhs, d)


def test_a_with_three_dimensions_in_the_normal_layout():
    lhs, rhs, d = normal_args()
    lhs[0] = lhs[0].unsqueeze(0)
    expect(ValueError, "a", call_normal, lhs, rhs, d)


def test_more_than_three_dimensions():
    lhs, rhs, d = normal_args()
    expect(ValueError, "d", call_normal, lhs, rhs, d.view(1, 1, M, N))


@pytest.mark.parametrize("shape", [(M + 1, N), (M, N - 8), (N, M)])
def test_wrong_d_shape(shape):
    lhs, rhs, _ = normal_args()
    expect(ValueError, "d", call_normal, lhs, rhs, torch.empty(shape, dtype=torch.bfloat16))


def test_wrong_c_shape():
    lhs, rhs, d = normal_args()
    expect(ValueError, "c", call_normal, lhs, rhs, d, c=torch.zeros(M, N + 8))


def test_c_that_overlaps_d_without_being_d():
    """C is D itself (accumulation in place) or apart from it; a C sharing part of D's memory is refused."""
    lhs, rhs, _ = normal_args()
    storage = torch.zeros(M + 1, N)
    d, c = storage[1:], storage[:M]
    with pytest.raises(ValueError, match=r"argument 'c' must be d itself .* or not overlap d"):
        call_normal(lhs, rhs, d, c=c)
    call_normal(lhs, rhs, d, c=d)  # C is D: accepted
    call_normal(lhs, rhs, d, c=torch.zeros(M, N))  # C apart from D: accepted


def test_k_not_a_multiple_of_16():
    lhs, rhs, d = normal_args()
    lhs[0], lhs[1] = torch.zeros(M, 120, dtype=FP8), torch.ones(M, 1)
    rhs[0], rhs[1] = torch.zeros(N, 120, dtype=FP8), torch.ones(2, 1)
    expect(ValueError, "a", call_normal, lhs, rhs, d)


@pytest.mark.parametrize(
    "position,argument,shape",
    [((0, 1), "sfa", (M, 3)), ((0, 1), "sfa", (M + 1, 2)), ((1, 1), "sfb", (3, 2)), ((1, 1), "sfb", (2, 1))],
)
def test_wrong_scale_shape(position, argument, shape):
    args = normal_args()
    pair, index = position
    args[pair][index] = torch.ones(shape)
    expect(ValueError, argument, call_normal, *args)


# ---- strides and alignment ------------------------------------------------------------------------------

def test_a_not_contiguous_along_k():
    lhs, rhs, d = normal_args()
    lhs[0] = torch.zeros(M, 2 * K, dtype=FP8)[:, ::2]
    expect(ValueError, "a", call_normal, lhs, rhs, d)


def test_b_transposed():
    lhs, rhs, d = normal_args()
    rhs[0] = torch.zeros(K, N, dtype=FP8).T
    expect(ValueError, "b", call_normal, lhs, rhs, d)


def test_d_not_contiguous_along_n():
    lhs, rhs, _ = normal_args()
    expect(ValueError, "d", call_normal, lhs, rhs, torch.empty(N, M, dtype=torch.bfloat16).T)


@pytest.mark.parametrize("argument", ["a", "b"])
def test_row_stride_not_a_multiple_of_16_bytes(argument):
    lhs, rhs, d = normal_args()
    pair = lhs if argument == "a" else rhs
    pair[0] = row_padded(pair[0].shape[0], K, FP8, pad=8)
    expect(ValueError, argument, call_normal, lhs, rhs, d)


def test_d_row_stride_not_a_multiple_of_16_bytes():
    lhs, rhs, _ = normal_args()
    expect(ValueError, "d", call_normal, lhs, rhs, row_padded(M, N, torch.bfloat16, pad=4))


def test_contiguous_bf16_d_with_n_not_a_multiple_of_8():
    lhs, rhs, _ = normal_args()
    rhs[0], rhs[1] = torch.zeros(12, K, dtype=FP8), torch.ones(1, 2)
    expect(ValueError, "d", call_normal, lhs, rhs, torch.empty(M, 12, dtype=torch.bfloat16))


def test_c_row_stride_not_a_multiple_of_16_bytes():
    lhs, rhs, d = normal_args()
    expect(ValueError, "c", call_normal, lhs, rhs, d, c=row_padded(M, N, torch.float32, pad=1))


def test_misaligned_start():
    lhs, rhs, d = normal_args()
    lhs[0] = torch.zeros(M * K + 1, dtype=FP8)[1:].view(M, K)
    expect(ValueError, "a", call_normal, lhs, rhs, d)


# ---- devices --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("argument", ["a", "sfb", "d"])
def test_tensor_on_a_device_fgemm_does_not_run(argument):
    lhs, rhs, d = normal_args()
    if argument == "a":
        lhs[0] = lhs[0].to("meta")
    elif argument == "sfb":
        rhs[1] = rhs[1].to("meta")
    else:
        d = d.to("meta")
    expect(ValueError, argument, call_normal, lhs, rhs, d)


@pytest.mark.gpu
@pytest.mark.parametrize("argument", ["sfa", "b", "d"])
def test_tensors_on_different_devices(argument):
    lhs, rhs, d = normal_args()
    lhs[0] = lhs[0].cuda()
    lhs[1], rhs[0], rhs[1], d = lhs[1].cuda(), rhs[0].cuda(), rhs[1].cuda(), d.cuda()
    if argument == "sfa":
        lhs[1] = lhs[1].cpu()
    elif argument == "b":
        rhs[0] = rhs[0].cpu()
    else:
        d = d.cpu()
    expect(ValueError, argument, call_normal, lhs, rhs, d)


# ---- arguments that are not tensors ---------------------------------------------------------------------

@pytest.mark.parametrize("argument", ["a", "sfa", "b", "sfb", "d", "c"])
def test_non_tensor_argument(argument):
    lhs, rhs, d = normal_args()
    kwargs = {}
    if argument == "a":
        lhs[0] = np.zeros((M, K), dtype=np.uint8)
    elif argument == "sfa":
        lhs[1] = [[1.0, 1.0]] * M
    elif argument == "b":
        rhs[0] = None
    elif argument == "sfb":
        rhs[1] = 1.0
    elif argument == "d":
        d = "d"
    else:
        kwargs["c"] = np.zeros((M, N), dtype=np.float32)
    expect(TypeError, argument, call_normal, lhs, rhs, d, **kwargs)


@pytest.mark.parametrize("pair", [None, (), (1,), "ab", (1, 2, 3)])
def test_operand_that_is_not_a_pair(pair):
    lhs, rhs, d = normal_args()
    expect(TypeError, "a", fgemm.fp8_gemm_nt, pair, tuple(rhs), d)


# ---- DeepGEMM's keyword arguments -----------------------------------------------------------------------

@pytest.mark.parametrize(
    "argument,value",
    [
        ("recipe", (1, 128, 64)),
        ("recipe", (128, 128, 128)),
        ("recipe", 128),
        ("recipe", "1,128,128"),
        ("recipe_a", (128, 128)),
        ("recipe_a", (1, 32)),
        ("recipe_b", (1, 64)),
    ],
)
def test_recipe_fgemm_does_not_implement(argument, value):
    expect(ValueError, argument, call_normal, *normal_args(), **{argument: value})


@pytest.mark.parametrize("argument,value", [("recipe", (1, 1, 128)), ("recipe_b", (1, 128))])
def test_recipe_1d1d_needs_scales_per_row_of_b(argument, value):
    # normal_args' sfb has one row per 128 rows of B (1D2D): the 1D1D recipe names sfb as the argument at fault.
    expect(ValueError, "sfb", call_normal, *normal_args(), **{argument: value})


def test_recipes_that_disagree():
    expect(ValueError, "recipe_b", call_normal, *normal_args(), recipe=(1, 128, 128), recipe_b=(1, 128))


@pytest.mark.parametrize("argument,value", [("recipe", (1, 1, 128)), ("recipe_b", (1, 128))])
def test_recipe_1d1d_only_for_the_normal_layout(argument, value):
    expect(ValueError, argument, call_contiguous, *contiguous_args(), **{argument: value})


@pytest.mark.parametrize("argument,value", [("compiled_dims", 3), ("compiled_dims", None),
                                            ("disable_ue8m0_cast", 1), ("disable_ue8m0_cast", "yes")])
def test_option_of_the_wrong_type(argument, value):
    expect(TypeError, argument, call_normal, *normal_args(), **{argument: value})


@pytest.mark.parametrize(
    "options",
    [{"recipe": (1, 128, 128)}, {"recipe": [1, 128, 128]}, {"recipe_a": (1, 128), "recipe_b": (128, 128)},
     {"compiled_dims": "mnk"}, {"compiled_dims": ""}, {"disable_ue8m0_cast": True}, {"disable_ue8m0_cast": False}],
)
def test_options_that_describe_fgemm_are_accepted(options):
    lhs, rhs, _ = normal_args()
    lhs = [torch.zeros(0, K, dtype=FP8), torch.ones(0, 2)]  # M = 0: checked, then nothing to compute
    fgemm.fp8_gemm_nt(tuple(lhs), tuple(rhs), torch.empty(0, N, dtype=torch.bfloat16), **options)


# ---- grouped layouts ------------------------------------------------------------------------------------

def call_contiguous(lhs, rhs, d, m_indices, **kwargs):
    fgemm.m_grouped_fp8_gemm_nt_contiguous(tuple(lhs), tuple(rhs), d, m_indices, **kwargs)


def call_masked(lhs, rhs, d, masked_m, expected_m=M, **kwargs):
    fgemm.m_grouped_fp8_gemm_nt_masked(tuple(lhs), tuple(rhs), d, masked_m, expected_m, **kwargs)


@pytest.mark.parametrize(
    "m_indices,error",
    [
        (torch.zeros(M, dtype=torch.int64), TypeError),
        (torch.zeros(M, dtype=torch.float32), TypeError),
        (torch.zeros(M + 1, dtype=torch.int32), ValueError),
        (torch.zeros(M - 1, dtype=torch.int32), ValueError),
        (torch.zeros(1, M, dtype=torch.int32), ValueError),
        (torch.zeros(2 * M, dtype=torch.int32)[::2], ValueError),
        ([0] * M, TypeError),
    ],
)
def test_bad_m_indices(m_indices, error):
    lhs, rhs, d, _ = contiguous_args()
    expect(error, "m_indices", call_contiguous, lhs, rhs, d, m_indices)


def test_contiguous_b_without_groups():
    lhs, rhs, d, m_indices = contiguous_args()
    rhs[0] = rhs[0][0]
    expect(ValueError, "b", call_contiguous, lhs, rhs, d, m_indices)


def test_contiguous_sfb_without_groups():
    lhs, rhs, d, m_indices = contiguous_args()
    rhs[1] = rhs[1][0]
    expect(ValueError, "sfb", call_contiguous, lhs, rhs, d, m_indices)


def test_contiguous_bad_recipe():
    expect(ValueError, "recipe", call_contiguous, *contiguous_args(), recipe=(1, 128, 1))


@pytest.mark.parametrize(
    "masked_m,error",
    [
        (torch.zeros(2, dtype=torch.int64), TypeError),
        (torch.zeros(2, dtype=torch.float32), TypeError),
        (torch.zeros(3, dtype=torch.int32), ValueError),
        (torch.zeros(1, dtype=torch.int32), ValueError),
        ((0, 0), TypeError),
    ],
)
def test_bad_masked_m(masked_m, error):
    lhs, rhs, d, _ = masked_args(groups=2)
    expect(error, "masked_m", call_masked, lhs, rhs, d, masked_m)


@pytest.mark.parametrize("expected_m,error", [(0, ValueError), (-3, ValueError), (2**70, ValueError),
                                              (1.5, TypeError), ("4", TypeError), (True, TypeError),
                                              (None, TypeError)])
def test_bad_expected_m(expected_m, error):
    expect(error, "expected_m", call_masked, *masked_args(), expected_m=expected_m)


def test_masked_groups_differ():
    lhs, rhs, d, masked_m = masked_args(groups=2)
    rhs[0], rhs[1] = torch.zeros(3, N, K, dtype=FP8), torch.ones(3, 2, 2)
    expect(ValueError, "b", call_masked, lhs, rhs, d, masked_m)


def test_masked_d_shape():
    lhs, rhs, d, masked_m = masked_args(groups=2)
    expect(ValueError, "d", call_masked, lhs, rhs, d[:, :, : N - 8], masked_m)


def test_masked_sfa_shape():
    lhs, rhs, d, masked_m = masked_args(groups=2)
    lhs[1] = torch.ones(M, 2)
    expect(ValueError, "sfa", call_masked, lhs, rhs, d, masked_m)


def test_masked_bad_option():
    expect(TypeError, "disable_ue8m0_cast", call_masked, *masked_args(), disable_ue8m0_cast=None)


# ---- k-grouped (the experts' weight gradients, recipe 1D1D) ----------------------------------------------

def k_grouped_args(ks=(128, 0), d_dtype=torch.float32):
    """Valid arguments of k_grouped_fp8_gemm_nt_contiguous but c: (a, sfa), (b, sfb), d, ks, ks_tensor."""
    k = sum(ks)
    lhs = (torch.zeros(k * M, dtype=FP8), torch.ones(M, k // 128))
    rhs = (torch.zeros(k * N, dtype=FP8), torch.ones(N, k // 128))
    return lhs, rhs, torch.empty(len(ks), M, N, dtype=d_dtype), list(ks), torch.tensor(ks, dtype=torch.int32)


def test_k_grouped_float32_d_needs_c():
    lhs, rhs, d, ks, ks_tensor = k_grouped_args()
    with pytest.raises(ValueError, match=r"argument 'c' is required where d is float32"):
        fgemm.k_grouped_fp8_gemm_nt_contiguous(lhs, rhs, d, ks, ks_tensor)
    fgemm.k_grouped_fp8_gemm_nt_contiguous(lhs, rhs, d, ks, ks_tensor, d)  # in place
    fgemm.k_grouped_fp8_gemm_nt_contiguous(lhs, rhs, d.bfloat16(), ks, ks_tensor)  # the gradient alone


def test_k_grouped_bad_d_and_c():
    lhs, rhs, d, ks, ks_tensor = k_grouped_args(d_dtype=torch.bfloat16)
    call = fgemm.k_grouped_fp8_gemm_nt_contiguous
    expect(TypeError, "d", call, lhs, rhs, d.half(), ks, ks_tensor)
    expect(TypeError, "c", call, lhs, rhs, d, ks, ks_tensor, d.half())  # C is float32 or d's bfloat16
    overlapping = torch.zeros(d.numel(), dtype=torch.float32)
    expect(ValueError, "c", call, lhs, rhs, overlapping.view(torch.bfloat16)[: d.numel()].view(d.shape), ks,
           ks_tensor, overlapping.view(d.shape))
    expect(ValueError, "c", call, lhs, rhs, d, ks, ks_tensor, torch.zeros(2, M, N + 8))


def test_k_grouped_counts_that_disagree_with_the_operands():
    lhs, rhs, d, ks, ks_tensor = k_grouped_args(d_dtype=torch.bfloat16)
    call = fgemm.k_grouped_fp8_gemm_nt_contiguous
    expect(ValueError, "ks", call, lhs, rhs, d, [256, 0], ks_tensor)
    expect(ValueError, "ks", call, lhs, rhs, d, [64, 64], ks_tensor)
    expect(ValueError, "ks", call, lhs, rhs, d, [128], ks_tensor[:1])
    expect(ValueError, "ks_tensor", call, lhs, rhs, d, ks, ks_tensor[:1])


def test_k_grouped_scales_of_another_recipe():
    lhs, rhs, d, ks, ks_tensor = k_grouped_args(d_dtype=torch.bfloat16)
    rhs = (rhs[0], torch.ones(2, 1))  # one scale per 128 x 128 block (1D2D): not the 1D1D recipe's
    expect(ValueError, "sfb", fgemm.k_grouped_fp8_gemm_nt_contiguous, lhs, rhs, d, ks, ks_tensor)


# ---- settings -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value,error", [(-1, ValueError), (2**40, ValueError), ("8", TypeError),
                                         (8.0, TypeError)])
def test_bad_num_sms(value, error):
    expect(error, "num_sms", fgemm.set_num_sms, value)


@pytest.mark.parametrize("value", [1, 0, None, "True"])
def test_pdl_takes_a_bool_only(value):
    expect(TypeError, "enable", fgemm.set_pdl, value)
    assert fgemm.get_pdl() is False
