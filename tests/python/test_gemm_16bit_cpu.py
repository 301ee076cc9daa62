"""The BF16 and FP16 GEMMs on the CPU against the float64 product of the same 16-bit values: every layout letter,
input dtype, output dtype and C (none, another tensor, d itself), shapes whose N and K are not multiples of 64,
rows padded past their width, and D inside a NaN-filled buffer whose padding, and whose rows no group owns,
must keep their NaN."""

import pytest
import torch

import fgemm
from operands import nan_poisoned_slice, outside
from operands_16bit import (
    DTYPES,
    LETTERS,
    assert_close,
    contiguous_reference,
    dense_operands,
    dense_reference,
    group_of_rows,
    grouped_layout,
    k_grouped_reference,
    matrix,
)

# (out, c): D in the inputs' dtype or FP32; no C, a C of its own, or C being D (FP32 D only).
OUT_AND_C = [("same", None), ("fp32", None), ("same", "c"), ("fp32", "c"), ("fp32", "d")]


def out_dtype(dtype_name, out):
    return DTYPES[dtype_name] if out == "same" else torch.float32


def output_and_c(shape, d_dtype, c_mode, generator):
    """(storage, d, c): d NaN-poisoned inside storage; c None, FP32 values in padded rows, or d holding them."""
    storage, d = nan_poisoned_slice(shape, d_dtype)
    if c_mode is None:
        return storage, d, None
    c = matrix(shape[-2], shape[-1], torch.float32, generator, spare_columns=1, lead=shape[:-2])
    if c_mode == "c":
        return storage, d, c
    d.copy_(c)
    return storage, d, d


def expected_c(c):
    """C as it was before the call (the call overwrites it when it is d)."""
    return None if c is None else c.clone()


@pytest.mark.parametrize("out,c_mode", OUT_AND_C)
@pytest.mark.parametrize("letters", LETTERS)
@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("m,n,k,spare_columns", [(1, 8, 8, 0), (37, 136, 264, 1), (130, 65, 72, 0), (0, 24, 16, 0)])
def test_dense(dtype_name, letters, out, c_mode, m, n, k, spare_columns):
    gen = torch.Generator().manual_seed(m * 7 + n + k)
    a, b = dense_operands(letters, m, n, k, DTYPES[dtype_name], gen, spare_columns=spare_columns)
    storage, d, c = output_and_c((m, n), out_dtype(dtype_name, out), c_mode, gen)
    reference = dense_reference(letters, a, b, expected_c(c))

    getattr(fgemm, f"{dtype_name}_gemm_{letters}")(a, b, d, c)

    assert_close(d, reference)
    assert outside(storage, d).isnan().all()


CONTIGUOUS_GROUPS = [([1], 0), ([5, 0, 130], 3), ([0, 0, 64], 0), ([128, 37], 91)]


@pytest.mark.parametrize("use_psum_layout", [False, True])
@pytest.mark.parametrize("out", ["same", "fp32"])
@pytest.mark.parametrize("letters", ["nt", "nn"])
@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("rows_per_group,tail", CONTIGUOUS_GROUPS)
def test_m_grouped_contiguous(dtype_name, letters, out, use_psum_layout, rows_per_group, tail):
    gen = torch.Generator().manual_seed(sum(rows_per_group) + tail)
    n, k = 72, 136
    groups = group_of_rows(rows_per_group, tail)
    dtype = DTYPES[dtype_name]
    a = matrix(groups.numel(), k, dtype, gen)
    b = matrix(*((n, k) if letters == "nt" else (k, n)), dtype, gen, lead=(len(rows_per_group),))
    storage, d = nan_poisoned_slice((groups.numel(), n), out_dtype(dtype_name, out))

    getattr(fgemm, f"m_grouped_{dtype_name}_gemm_{letters}_contiguous")(
        a, b, d, grouped_layout(rows_per_group, tail, use_psum_layout), use_psum_layout=use_psum_layout)

    owned = groups >= 0
    assert_close(d[owned], contiguous_reference(letters[1], a, b, groups)[owned])
    assert d[~owned].isnan().all()
    assert outside(storage, d).isnan().all()


@pytest.mark.parametrize("out", ["same", "fp32"])
@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("masked_m,m_max,n,k", [([0], 16, 8, 16), ([1, 0, 64, 17], 64, 136, 200),
                                                ([130, 3], 130, 24, 72)])
def test_m_grouped_masked(dtype_name, out, masked_m, m_max, n, k):
    gen = torch.Generator().manual_seed(m_max + n + k)
    groups = len(masked_m)
    dtype = DTYPES[dtype_name]
    a = matrix(m_max, k, dtype, gen, lead=(groups,))
    b = matrix(n, k, dtype, gen, lead=(groups,))
    storage, d = nan_poisoned_slice((groups, m_max, n), out_dtype(dtype_name, out))

    getattr(fgemm, f"m_grouped_{dtype_name}_gemm_nt_masked")(
        a, b, d, torch.tensor(masked_m, dtype=torch.int32), max(1, sum(masked_m) // groups))

    for group, rows in enumerate(masked_m):
        assert_close(d[group, :rows], dense_reference("nt", a[group, :rows], b[group]))
        assert d[group, rows:].isnan().all()
    assert outside(storage, d).isnan().all()


@pytest.mark.parametrize("c_mode", [None, "c", "d"])
@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("ks,m,n", [([128, 0, 256], 24, 37), ([0, 0], 8, 8), ([128], 65, 136)])
def test_k_grouped(dtype_name, c_mode, ks, m, n):
    gen = torch.Generator().manual_seed(sum(ks) + m + n)
    dtype = DTYPES[dtype_name]
    a = matrix(sum(ks), m, dtype, gen, spare_columns=1)
    b = matrix(sum(ks), n, dtype, gen)
    storage, d, c = output_and_c((len(ks), m, n), torch.float32, c_mode, gen)
    reference = k_grouped_reference(a, b, ks, expected_c(c))

    getattr(fgemm, f"k_grouped_{dtype_name}_gemm_tn_contiguous")(a, b, d, ks, torch.tensor(ks, dtype=torch.int32),
                                                                   c)

    assert_close(d, reference)
    for group in (g for g, k in enumerate(ks) if k == 0):  # an empty expert's D is C, or zeros
        assert torch.equal(d[group], reference[group].float())
    assert outside(storage, d).isnan().all()

