"""The BF16 and FP16 GEMMs on the CPU against the float64 product of the same 16-bit values (checks_16bit.py):
every layout letter, input dtype, output dtype and C (none, another tensor, d itself), shapes whose N and K are
not multiples of 64, rows padded past their width, and D inside a NaN-filled buffer whose padding, and whose rows
no group owns, must keep their NaN."""

import pytest

from checks_16bit import OUT_AND_C, check_contiguous, check_dense, check_k_grouped, check_masked
from operands_16bit import DTYPES, LETTERS


@pytest.mark.parametrize("out,c_mode", OUT_AND_C)
@pytest.mark.parametrize("letters", LETTERS)
@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("m,n,k,spare_columns", [(1, 8, 8, 0), (37, 136, 264, 1), (130, 65, 72, 0), (0, 24, 16, 0)])
def test_dense(dtype_name, letters, out, c_mode, m, n, k, spare_columns):
    check_dense(dtype_name, letters, out, c_mode, m, n, k, spare_columns)


# (rows of each group, padding rows after the last): empty groups, unaligned ends, a group of one row.
@pytest.mark.parametrize("rows_per_group,tail", [([1], 0), ([5, 0, 130], 3), ([0, 0, 64], 0), ([128, 37], 91)])
@pytest.mark.parametrize("use_psum_layout", [False, True])
@pytest.mark.parametrize("out", ["same", "fp32"])
@pytest.mark.parametrize("letters", ["nt", "nn"])
@pytest.mark.parametrize("dtype_name", DTYPES)
def test_m_grouped_contiguous(dtype_name, letters, out, use_psum_layout, rows_per_group, tail):
    check_contiguous(dtype_name, letters, out, use_psum_layout, rows_per_group, tail, n=72, k=136)


@pytest.mark.parametrize("out", ["same", "fp32"])
@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("masked_m,m_max,n,k", [([0], 16, 8, 16), ([1, 0, 64, 17], 64, 136, 200),
                                                ([130, 3], 130, 24, 72)])
def test_m_grouped_masked(dtype_name, out, masked_m, m_max, n, k):
    check_masked(dtype_name, out, masked_m, m_max, n, k)


@pytest.mark.parametrize("c_mode", [None, "c", "d"])
@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("ks,m,n", [([128, 0, 256], 24, 37), ([0, 0], 8, 8), ([128], 65, 136)])
def test_k_grouped(dtype_name, c_mode, ks, m, n):
    check_k_grouped(dtype_name, c_mode, ks, m, n)
