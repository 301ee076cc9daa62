"""The grouped layouts on the CPU: each group's rows against the definition of ARCHITECTURE.md, Semantics, in
float64, and the rows a group does not own (padding rows, rows past masked_m) left exactly as they were."""

import pytest
import torch

import fgemm
from operands import activations, assert_matches, nan_poisoned_slice, outside, reference_gemm, weights

ALIGNMENT = fgemm.get_m_alignment_for_contiguous_layout()


def contiguous_m_indices(rows_per_group):
    """Each group's rows followed by -1 rows up to the next multiple of the alignment."""
    indices = []
    for group, rows in enumerate(rows_per_group):
        indices += [group] * rows + [-1] * (-rows % ALIGNMENT)
    return torch.tensor(indices, dtype=torch.int32)


@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("mn_major_sfa", [False, True])
@pytest.mark.parametrize(
    "rows_per_group,n,k",
    [([1], 8, 16), ([128, 5, 0, 130], 96, 272), ([37, 200], 1032, 384), ([0, 0, 64], 64, 128)],
)
def test_contiguous(rows_per_group, n, k, mn_major_sfa, out_dtype):
    gen = torch.Generator().manual_seed(len(rows_per_group) * 100 + k)
    groups = len(rows_per_group)
    m_indices = contiguous_m_indices(rows_per_group)
    m_sum = m_indices.numel()
    a, sfa = activations(m_sum, k, gen)
    b, sfb = weights(n, k, gen, groups=groups)
    storage, d = nan_poisoned_slice((m_sum, n), out_dtype)
    sfa_arg = fgemm.get_mn_major_tma_aligned_tensor(sfa) if mn_major_sfa else sfa

    fgemm.m_grouped_fp8_gemm_nt_contiguous((a, sfa_arg), (b, sfb), d, m_indices)

    for group in range(groups):
        rows = m_indices == group
        assert_matches(d[rows], reference_gemm(a[rows], sfa[rows], b[group], sfb[group]))
    assert d[m_indices == -1].isnan().all()
    assert outside(storage, d).isnan().all()


@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("mn_major_sfa", [False, True])
@pytest.mark.parametrize(
    "masked_m,m_max,n,k",
    [([0], 16, 8, 16), ([1, 0, 64, 17], 64, 136, 400), ([130, 130], 130, 24, 256), ([3, 1], 200, 1024, 144)],
)
def test_masked(masked_m, m_max, n, k, mn_major_sfa, out_dtype):
    gen = torch.Generator().manual_seed(m_max * 1000 + k)
    groups = len(masked_m)
    a, sfa = activations(m_max, k, gen, groups=groups)
    b, sfb = weights(n, k, gen, groups=groups)
    storage, d = nan_poisoned_slice((groups, m_max, n), out_dtype)
    sfa_arg = fgemm.get_mn_major_tma_aligned_tensor(sfa) if mn_major_sfa else sfa
    expected_m = max(1, sum(masked_m) // groups)

    fgemm.m_grouped_fp8_gemm_nt_masked(
        (a, sfa_arg), (b, sfb), d, torch.tensor(masked_m, dtype=torch.int32), expected_m
    )

    for group, rows in enumerate(masked_m):
        assert_matches(d[group, :rows], reference_gemm(a[group, :rows], sfa[group, :rows], b[group], sfb[group]))
        assert d[group, rows:].isnan().all()
    assert outside(storage, d).isnan().all()

