"""fgemm.deep_gemm in place of DeepGEMM: code written for DeepGEMM's Python API (its names, keyword arguments,
utils and environment variables) runs on fgemm, and DeepGEMM's functions that fgemm lacks raise
NotImplementedError naming themselves."""

import os
import subprocess
import sys

import pytest
import torch

import fgemm
import fgemm.deep_gemm

fgemm.deep_gemm.install()
import deep_gemm  # noqa: E402 (the import under test: fgemm's module under DeepGEMM's name)
from deep_gemm.testing import calc_diff  # noqa: E402
from deep_gemm.utils import per_block_cast_to_fp8, per_token_cast_to_fp8  # noqa: E402

M, N, K, G = 64, 256, 512, 2


def gen():
    return torch.Generator().manual_seed(1)


def quantized_operands(groups=None, m=M):
    """DeepGEMM's test recipe: per-token A [m, K], per-block B, sfa made MN-major by
    transform_sf_into_required_layout."""
    g = gen()
    x = torch.randn(m, K, generator=g, dtype=torch.bfloat16)
    w = torch.randn((groups or 1) * N, K, generator=g, dtype=torch.bfloat16)
    a, sfa = per_token_cast_to_fp8(x, use_ue8m0=False)
    sfa = deep_gemm.transform_sf_into_required_layout(sfa, m, K, (1, 128, 128), is_sfa=True)
    b, sfb = per_block_cast_to_fp8(w, use_ue8m0=False)
    if groups is not None:
        b, sfb = b.view(groups, N, K), sfb.view(groups, N // 128, K // 128)
    return (a, sfa), (b, sfb)


def test_the_installed_modules_are_fgemms():
    assert sys.modules["deep_gemm"] is fgemm.deep_gemm
    assert deep_gemm.utils is fgemm.deep_gemm.utils and deep_gemm.testing is fgemm.deep_gemm.testing


def test_normal_gemm_with_deepgemm_keywords_equals_fgemm():
    lhs, rhs = quantized_operands()
    d = torch.empty(M, N, dtype=torch.bfloat16)
    deep_gemm.fp8_gemm_nt(lhs, rhs, d, c=None, recipe=(1, 128, 128), compiled_dims="nk", disable_ue8m0_cast=False)
    expected = torch.empty_like(d)
    fgemm.fp8_gemm_nt(lhs, rhs, expected)
    assert torch.equal(d, expected)
    reference = fgemm.quantize.per_token_dequantize(*lhs, torch.float64) @ fgemm.quantize.per_block_dequantize(
        *rhs, torch.float64).T
    assert calc_diff(d, reference) < 1e-5
    legacy = torch.empty_like(d)
    deep_gemm.gemm_fp8_fp8_bf16_nt(lhs=lhs, rhs=rhs, out=legacy)
    assert torch.equal(legacy, expected)


def test_normal_gemm_refuses_alpha():
    lhs, rhs = quantized_operands()
    with pytest.raises(ValueError, match="argument 'alpha'"):
        deep_gemm.fp8_gemm_nt(lhs, rhs, torch.empty(M, N, dtype=torch.bfloat16), alpha=2.0)


def contiguous_layout():
    """Two groups of 32 rows each, the second segment padded: rows 0-31 group 0, 32-47 group 1, 48-63 padding."""
    layout = torch.full((M,), -1, dtype=torch.int32)
    layout[:32], layout[32:48] = 0, 1
    return layout


def test_contiguous_gemm_with_deepgemm_keywords_equals_fgemm():
    lhs, rhs = quantized_operands(groups=G)
    layout = contiguous_layout()
    d = torch.zeros(M, N, dtype=torch.bfloat16)
    deep_gemm.m_grouped_fp8_gemm_nt_contiguous(lhs, rhs, d, grouped_layout=layout, recipe=None, compiled_dims="nk",
                                               disable_ue8m0_cast=False, use_psum_layout=False,
                                               ensure_zero_padding=False)
    expected = torch.zeros_like(d)
    fgemm.m_grouped_fp8_gemm_nt_contiguous(lhs, rhs, expected, layout)
    assert torch.equal(d, expected) and (d[48:] == 0).all() and (d[:48] != 0).any()
    legacy = torch.zeros_like(d)
    deep_gemm.m_grouped_gemm_fp8_fp8_bf16_nt_contiguous(lhs=lhs, rhs=rhs, out=legacy, m_indices=layout)
    assert torch.equal(legacy, expected)


def test_contiguous_gemm_takes_the_psum_layout():
    # Group 0 has rows 0-99, group 1 starts at 128 (100 rounded up to a multiple of 128) and ends at 176.
    m = 256
    lhs, rhs = quantized_operands(groups=G, m=m)
    m_indices = torch.full((m,), -1, dtype=torch.int32)
    m_indices[:100], m_indices[128:176] = 0, 1
    expected = torch.zeros(m, N, dtype=torch.bfloat16)
    fgemm.m_grouped_fp8_gemm_nt_contiguous(lhs, rhs, expected, m_indices)
    d = torch.zeros_like(expected)
    deep_gemm.m_grouped_fp8_gemm_nt_contiguous(lhs, rhs, d, torch.tensor([100, 176], dtype=torch.int32),
                                               use_psum_layout=True, expected_m_for_psum_layout=64)
    assert torch.equal(d, expected) and (d[100:128] == 0).all() and (d[176:] == 0).all()


def test_contiguous_gemm_names_grouped_layout_and_checks_its_options():
    lhs, rhs = quantized_operands(groups=G)
    d = torch.zeros(M, N, dtype=torch.bfloat16)
    with pytest.raises(TypeError, match="argument 'grouped_layout'"):
        deep_gemm.m_grouped_fp8_gemm_nt_contiguous(lhs, rhs, d, contiguous_layout().long())
    with pytest.raises(TypeError, match="argument 'ensure_zero_padding'"):
        deep_gemm.m_grouped_fp8_gemm_nt_contiguous(lhs, rhs, d, contiguous_layout(), ensure_zero_padding=None)
    with pytest.raises(ValueError, match="argument 'expected_m_for_psum_layout' must be None without"):
        deep_gemm.m_grouped_fp8_gemm_nt_contiguous(lhs, rhs, d, contiguous_layout(), expected_m_for_psum_layout=32)
    psum = torch.tensor([32, 48], dtype=torch.int32)
    with pytest.raises(ValueError, match="argument 'expected_m_for_psum_layout' must be a positive"):
        deep_gemm.m_grouped_fp8_gemm_nt_contiguous(lhs, rhs, d, psum, use_psum_layout=True,
                                                   expected_m_for_psum_layout=0)
    with pytest.raises(TypeError, match="argument 'use_psum_layout'"):
        deep_gemm.m_grouped_fp8_gemm_nt_contiguous(lhs, rhs, d, psum, use_psum_layout=1)
    with pytest.raises(ValueError, match="argument 'grouped_layout'"):  # [M_sum] where [G] is expected
        deep_gemm.m_grouped_fp8_gemm_nt_contiguous(lhs, rhs, d, contiguous_layout(), use_psum_layout=True)


def test_masked_gemm_with_deepgemm_keywords_equals_fgemm():
    g = gen()
    x = torch.randn(G, M, K, generator=g)
    a = deep_gemm.per_token_cast_to_fp8(x.view(G * M, K), use_ue8m0=False)
    lhs = (a[0].view(G, M, K), a[1].view(G, M, K // 128))
    _, rhs = quantized_operands(groups=G)
    masked_m = torch.tensor([M, 17], dtype=torch.int32)
    d = torch.zeros(G, M, N, dtype=torch.bfloat16)
    deep_gemm.m_grouped_fp8_gemm_nt_masked(lhs, rhs, d, masked_m, expected_m=32, recipe=(1, 128, 128),
                                           compiled_dims="nk", disable_ue8m0_cast=False)
    expected = torch.zeros_like(d)
    deep_gemm.m_grouped_gemm_fp8_fp8_bf16_nt_masked(lhs=lhs, rhs=rhs, out=expected, masked_m=masked_m, expected_m=32)
    assert torch.equal(d, expected) and (d[1, 17:] == 0).all() and (d[1, :17] != 0).any()


def test_utils_with_deepgemm_arguments():
    assert deep_gemm.ceil_div(129, 128) == 2 and deep_gemm.align(129, 128) == 256
    assert deep_gemm.get_tma_aligned_size(mn=5, element_size=4) == 8
    assert deep_gemm.get_mk_alignment_for_contiguous_layout() == deep_gemm.get_m_alignment_for_contiguous_layout() == 128
    sf = torch.rand(5, 3)
    aligned = deep_gemm.get_mn_major_tma_aligned_tensor(sf)
    assert aligned.stride() == (1, 8) and torch.equal(aligned, sf)
    assert deep_gemm.get_col_major_tma_aligned_tensor(aligned) is aligned
    with pytest.raises(NotImplementedError, match="use_packed_ue8m0"):
        deep_gemm.per_token_cast_to_fp8(torch.randn(4, 128), use_ue8m0=True, use_packed_ue8m0=True)
    with pytest.raises(NotImplementedError, match="psum_layout"):
        deep_gemm.transform_sf_into_required_layout(sf, 5, 384, (1, 128), psum_layout=torch.zeros(1))
    deep_gemm.set_num_sms(0)
    assert deep_gemm.get_num_sms() >= 0
    deep_gemm.set_pdl(True)
    try:
        assert deep_gemm.get_pdl() and fgemm.get_pdl()
    finally:
        deep_gemm.set_pdl(False)


MISSING = sorted(set(deep_gemm.__all__) - set(deep_gemm.IMPLEMENTED) - {"install", "utils", "testing"})


def test_deepgemms_other_functions_are_listed_as_missing():
    for name in ("k_grouped_fp8_gemm_tn_contiguous", "fp8_gemm_nn", "fp8_gemm_tn", "fp8_gemm_tt",
                 "einsum", "fp8_mqa_logits", "set_tc_util", "pack_ue8m0_to_int"):
        assert name in MISSING


def test_16bit_gemms_with_deepgemm_keywords_equal_fgemm():
    g = gen()
    a = torch.randn(M, K, generator=g, dtype=torch.bfloat16)
    b = torch.randn(G, N, K, generator=g, dtype=torch.bfloat16)
    expected, d = torch.zeros(M, N), torch.zeros(M, N)
    fgemm.bf16_gemm_nt(a, b[0], expected)
    deep_gemm.bf16_gemm_nt(a, b[0], d, c=None, compiled_dims="nk")
    assert torch.equal(d, expected)
    expected, d = torch.zeros(M, N), torch.zeros(M, N)
    fgemm.m_grouped_bf16_gemm_nt_contiguous(a, b, expected, contiguous_layout())
    deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, grouped_layout=contiguous_layout(), compiled_dims="nk",
                                                use_psum_layout=False, ensure_zero_padding=False,
                                                expected_m_for_psum_layout=None)
    assert torch.equal(d, expected) and (d[48:] == 0).all() and (d[:48] != 0).any()
    with pytest.raises(TypeError, match="deep_gemm.m_grouped_bf16_gemm_nn_contiguous: argument 'ensure_zero_padding'"):
        deep_gemm.m_grouped_bf16_gemm_nn_contiguous(a, b.transpose(1, 2).contiguous(), d, contiguous_layout(),
                                                    ensure_zero_padding="yes")
    assert deep_gemm.k_grouped_fp16_gemm_tn_contiguous is fgemm.k_grouped_fp16_gemm_tn_contiguous


@pytest.mark.parametrize("name", MISSING)
def test_each_missing_function_raises_not_implemented_naming_it(name):
    with pytest.raises(NotImplementedError, match=f"deep_gemm.{name} is not implemented by fgemm"):
        getattr(deep_gemm, name)(torch.zeros(1), key=1)


@pytest.mark.parametrize("name", ["bench_kineto", "count_bytes"])
def test_missing_testing_helpers_raise_not_implemented(name):
    with pytest.raises(NotImplementedError, match=name):
        getattr(deep_gemm.testing, name)()


def environment_after_import(environment):
    """FGEMM_CACHE_DIR and FGEMM_PRINT_CONFIGS as the C library's getenv sees them after `import fgemm.deep_gemm`
    in a fresh process with `environment`."""
    script = ("import ctypes, fgemm.deep_gemm\n"
              "libc = ctypes.CDLL(None); libc.getenv.restype = ctypes.c_char_p\n"
              "print(libc.getenv(b'FGEMM_CACHE_DIR'), libc.getenv(b'FGEMM_PRINT_CONFIGS'))")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("FGEMM_CACHE_DIR", "FGEMM_PRINT", "DG_"))}
    result = subprocess.run([sys.executable, "-c", script], env={**clean, **environment}, capture_output=True,
                            text=True, check=True)
    return result.stdout.strip()


def test_deepgemm_environment_variables_set_fgemms_where_unset(tmp_path):
    assert environment_after_import({"DG_JIT_CACHE_DIR": str(tmp_path), "DG_PRINT_CONFIGS": "1"}) == \
        f"{str(tmp_path).encode()!r} b'1'"
    assert environment_after_import({"DG_JIT_CACHE_DIR": "/dg", "FGEMM_CACHE_DIR": "/fgemm"}) == "b'/fgemm' None"
