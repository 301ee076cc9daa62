"""Inputs and FP64 references of the BF16 and FP16 GEMMs' tests, on the CPU and the GPU: operands stored as the
layout letters say (fgemm/gemm_16bit.py), optionally inside wider rows, the groups of the grouped layouts, and
D = C + A·B computed in float64 from the same 16-bit values."""

import math

import torch

import fgemm
from operands import assert_each_element_close

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
LETTERS = ("nt", "nn", "tn", "tt")
ALIGNMENT = fgemm.get_m_alignment_for_contiguous_layout()
# FP32 accumulation of exactly representable products is the whole error before D's rounding: calc_diff stays
# about 1e-6 for a BF16 D and far below for FP16 and FP32 ones, so 1e-5 catches any wrong block of elements.
MAX_DIFF = 1e-5
# And each element on its own (operands.assert_each_element_close), so that a few wrong ones among millions fail
# too: within D's rounding plus 2^-16 of the sum of its products' magnitudes. FP32 sums of these tests' random
# products stay far inside that (on the CPU the worst element used 0.003 of its bound, K of 264 to 7168), while an
# element of C added twice (N(0, 1)) is off by 20 (K = 7168) to 500 (K = 264) times the bound.
SUM_TOLERANCE = 2.0**-16


def elements_per_16_bytes(dtype):
    return 16 // torch.empty((), dtype=dtype).element_size()


def matrix(rows, cols, dtype, generator, device="cpu", spare_columns=0, lead=()):
    """Random normal values in a [*lead, rows, cols] view whose rows start on 16-byte boundaries (the TMA's rule),
    with `spare_columns` 16-byte chunks of padding after each row (and rows of one chunk at least, so that a view
    with no columns still has a row stride the TMA takes)."""
    per_chunk = elements_per_16_bytes(dtype)
    width = (max(1, math.ceil(cols / per_chunk)) + spare_columns) * per_chunk
    storage = torch.randn((*lead, rows, width), generator=generator, device=device).to(dtype)
    return storage[..., :cols]


def dense_operands(letters, m, n, k, dtype, generator, device="cpu", spare_columns=0):
    """a and b of a dense GEMM stored as its letters say: a [M, K] (n) or [K, M] (t), b [N, K] (t) or [K, N] (n)."""
    a_shape = (m, k) if letters[0] == "n" else (k, m)
    b_shape = (n, k) if letters[1] == "t" else (k, n)
    return (matrix(*a_shape, dtype, generator, device, spare_columns),
            matrix(*b_shape, dtype, generator, device, spare_columns))


def as_mk(a, letter):
    """A as [.., M, K] float64, from its storage of layout letter `letter`."""
    return a.double() if letter == "n" else a.double().transpose(-1, -2)


def as_kn(b, letter):
    """B as [.., K, N] float64, from its storage of layout letter `letter`."""
    return b.double().transpose(-1, -2) if letter == "t" else b.double()


def dense_reference(letters, a, b, c=None):
    """(C + A B in float64, |A| |B|: each element's sum_k |a_k b_k|)."""
    a64, b64 = as_mk(a, letters[0]), as_kn(b, letters[1])
    d = a64 @ b64
    return (d if c is None else d + c.double()), a64.abs() @ b64.abs()


def group_of_rows(rows_per_group, tail=0):
    """int64 [M_sum]: each group's rows from a multiple of the alignment, -1 on the padding rows between groups
    and on `tail` padding rows after the last group."""
    groups = []
    for group, rows in enumerate(rows_per_group):
        groups += [-1] * (-len(groups) % ALIGNMENT) + [group] * rows
    return torch.tensor(groups + [-1] * tail, dtype=torch.int64)


def grouped_layout(rows_per_group, tail, use_psum_layout, device="cpu"):
    """The int32 grouped_layout of group_of_rows(rows_per_group, tail): m_indices [M_sum], or with
    use_psum_layout the prefix sums [G], each group ending where its rows end (an empty group's end is its
    start, the previous end rounded up to the alignment)."""
    if not use_psum_layout:
        return group_of_rows(rows_per_group, tail).to(torch.int32).to(device)
    ends, start = [], 0
    for rows in rows_per_group:
        ends.append(start + rows)
        start = math.ceil(ends[-1] / ALIGNMENT) * ALIGNMENT
    return torch.tensor(ends, dtype=torch.int32, device=device)


def contiguous_reference(b_letter, a, b, groups):
    """([M_sum, N] float64: row m is a[m] times B[groups[m]] (zero on padding rows, which the tests skip), and the
    magnitudes of its products, as dense_reference)."""
    d = torch.zeros(a.shape[0], b.shape[1] if b_letter == "t" else b.shape[2], dtype=torch.float64,
                    device=a.device)
    magnitudes = torch.zeros_like(d)
    for group in range(b.shape[0]):
        rows = groups.to(a.device) == group
        a64, b64 = a[rows].double(), as_kn(b[group], b_letter)
        d[rows] = a64 @ b64
        magnitudes[rows] = a64.abs() @ b64.abs()
    return d, magnitudes


def k_grouped_reference(a, b, ks, c=None):
    """([G, M, N] float64: expert g's a rows transposed times its b rows, plus c; and the magnitudes of its
    products, as dense_reference)."""
    d = torch.zeros(len(ks), a.shape[1], b.shape[1], dtype=torch.float64, device=a.device)
    magnitudes = torch.zeros_like(d)
    start = 0
    for group, k in enumerate(ks):
        a64, b64 = a[start : start + k].double().T, b[start : start + k].double()
        d[group] = a64 @ b64
        magnitudes[group] = a64.abs() @ b64.abs()
        start += k
    return (d if c is None else d + c.double()), magnitudes


def assert_close(d, reference, magnitudes):
    """d within MAX_DIFF of the float64 reference, and each element within its bound (SUM_TOLERANCE; nothing to
    compare where both are empty)."""
    assert not d.isnan().any(), "NaN left in the computed part of d"
    diff = fgemm.calc_diff(d, reference)
    assert diff < MAX_DIFF, f"calc_diff {diff:.3g}"
    assert_each_element_close(d, reference, magnitudes, SUM_TOLERANCE)
