"""Bad arguments of the INT8 GEMMs raise errors that name the argument and what was expected, before anything
runs (CPU tensors; the checks are the same for every device)."""

import pytest
import torch

import fgemm


def int8(*shape):
    return torch.zeros(shape, dtype=torch.int8)


def f32(*shape):
    return torch.ones(shape, dtype=torch.float32)


M, N, K = 64, 256, 512


def call(a=None, sa=None, b=None, sb=None, d=None, c=None, bias=None):
    a = int8(M, K) if a is None else a
    b = int8(N, K) if b is None else b
    sa = f32(M) if sa is None else sa
    sb = f32(N) if sb is None else sb
    d = torch.empty(M, N, dtype=torch.bfloat16) if d is None else d
    fgemm.int8_gemm_nt((a, sa), (b, sb), d, c, bias)


@pytest.mark.parametrize("sa,sb,argument,words", [
    (f32(M, 3), f32(N), "sa", "(per token) or [M, ceil(K/128)]"),
    (f32(M), f32(N, 4), "sb", "[N], [1, N] or 0-d (per channel, as sa is per token)"),
    (f32(M, 4), f32(N), "sb", "[ceil(N/128), ceil(K/128)] (128 x 128 blocks"),
    (f32(M, 4), f32(3, 4), "sb", "[ceil(N/128), ceil(K/128)]"),
    (f32(M + 1), f32(N), "sa", "[M], [M, 1] or 0-d"),
])
def test_scales_that_name_no_recipe(sa, sb, argument, words):
    with pytest.raises(ValueError, match=rf"fgemm\.int8_gemm_nt: argument '{argument}' expected .*") as error:
        call(sa=sa, sb=sb)
    assert words in str(error.value)


def test_fp8_b_with_int8_a():
    with pytest.raises(TypeError, match=r"argument 'b' expected dtype int8, got float8_e4m3fn"):
        call(b=int8(N, K).view(torch.float8_e4m3fn))


def test_scales_of_another_dtype():
    with pytest.raises(TypeError, match=r"argument 'sa' expected dtype float32, got bfloat16"):
        call(sa=f32(M).bfloat16())


def test_bias_of_wrong_length_or_dtype():
    with pytest.raises(ValueError, match=r"argument 'bias' expected shape \[256\] \(\[N\]"):
        call(bias=f32(N - 1))
    with pytest.raises(TypeError, match=r"argument 'bias' expected dtype float32 or bfloat16"):
        call(bias=f32(N).half())
    with pytest.raises(TypeError, match=r"argument 'bias' expected dtype float32 \(float32 or the dtype of d\)"):
        call(d=torch.empty(M, N), bias=f32(N).bfloat16())


def test_output_dtypes():
    with pytest.raises(TypeError, match=r"argument 'd' expected dtype bfloat16, float16 or float32"):
        call(d=torch.empty(M, N, dtype=torch.int32))
    with pytest.raises(TypeError, match=r"argument 'd' expected dtype int32, got bfloat16"):
        fgemm.int8_gemm_nt(int8(M, K), int8(N, K), torch.empty(M, N, dtype=torch.bfloat16))


def test_exact_takes_no_scales_c_or_bias():
    d = torch.empty(M, N, dtype=torch.int32)
    with pytest.raises(ValueError, match=r"argument 'c' must be None for the exact INT32 product"):
        fgemm.int8_gemm_nt(int8(M, K), int8(N, K), d, c=f32(M, N))
    with pytest.raises(ValueError, match=r"argument 'bias' must be None for the exact INT32 product"):
        fgemm.int8_gemm_nt(int8(M, K), int8(N, K), d, bias=f32(N))
    with pytest.raises(TypeError, match=r"argument 'b' expected a tensor, as a is one"):
        fgemm.int8_gemm_nt(int8(M, K), (int8(N, K), f32(N)), d)


def test_k_and_shapes():
    with pytest.raises(ValueError, match=r"argument 'a' needs K to be a multiple of 16"):
        call(a=int8(M, 520), b=int8(N, 520))
    with pytest.raises(ValueError, match=r"argument 'b' expected shape \[256, 512\] \(\[N, K\] with the K of a\)"):
        call(b=int8(N, K + 16))
    with pytest.raises(ValueError, match=r"argument 'c' expected the shape of d"):
        call(c=f32(M, N + 1))


def test_grouped_layouts():
    groups = 3
    a, b = int8(256, K), int8(groups, N, K)
    d = torch.empty(256, N, dtype=torch.bfloat16)
    m_indices = torch.zeros(256, dtype=torch.int32)
    with pytest.raises(ValueError, match=r"m_grouped_int8_gemm_nt_contiguous: argument 'sb' expected \[G, N\], "
                                         r"\[G\] or \[G, 1\] \(per channel"):
        fgemm.m_grouped_int8_gemm_nt_contiguous((a, f32(256)), (b, f32(N)), d, m_indices)
    with pytest.raises(ValueError, match=r"argument 'grouped_layout' expected shape \[256\]"):
        fgemm.m_grouped_int8_gemm_nt_contiguous((a, f32(256)), (b, f32(groups, N)), d, m_indices[:10])
    masked_a, masked_d = int8(groups, 64, K), torch.empty(groups, 64, N, dtype=torch.bfloat16)
    counts = torch.zeros(groups, dtype=torch.int32)
    with pytest.raises(ValueError, match=r"m_grouped_int8_gemm_nt_masked: argument 'sa' expected \[G, M_max\] or "
                                         r"\[G, M_max, 1\] \(per token\)"):
        fgemm.m_grouped_int8_gemm_nt_masked((masked_a, f32(64)), (b, f32(groups, N)), masked_d, counts, 64)
    with pytest.raises(ValueError, match=r"argument 'expected_m' must be a positive hint"):
        fgemm.m_grouped_int8_gemm_nt_masked((masked_a, f32(groups, 64)), (b, f32(groups, N)), masked_d, counts, 0)
