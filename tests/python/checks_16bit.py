"""One call of a BF16 or FP16 GEMM, checked: its inputs made (operands_16bit.py), d written inside a NaN-filled
buffer, the computed part against the float64 reference (calc_diff and element by element), and everything the
call must not write (the buffer's padding, rows no group owns, rows past masked_m) still NaN. The CPU and GPU
tests run these on their devices."""

import torch

import fgemm
from operands import nan_poisoned_slice, outside
from operands_16bit import (
    DTYPES,
    assert_close,
    contiguous_reference,
    dense_operands,
    dense_reference,
    group_of_rows,
    grouped_layout,
    k_grouped_reference,
    matrix,
)

# (out, c): D in the inputs' dtype or FP32; no C, an FP32 C of its own ("c"), one of D's 16-bit type ("c16"), or C
# being D ("d": DeepGEMM's accumulation in place, of D's dtype).
OUT_AND_C = [("same", None), ("fp32", None), ("same", "c"), ("fp32", "c"), ("fp32", "d"), ("same", "c16"),
             ("same", "d")]


def out_dtype(dtype_name, out):
    return DTYPES[dtype_name] if out == "same" else torch.float32


def generator(seed, device):
    return torch.Generator(device=device).manual_seed(seed)


def output_and_c(shape, d_dtype, c_mode, gen, device):
    """(storage, d, c): d NaN-poisoned inside storage; c None, random values in padded rows (FP32, or D's dtype for
    "c16"), or d holding them."""
    storage, d = nan_poisoned_slice(shape, d_dtype, device)
    if c_mode is None:
        return storage, d, None
    c_dtype = d_dtype if c_mode == "c16" else torch.float32
    c = matrix(shape[-2], shape[-1], c_dtype, gen, device, spare_columns=1, lead=shape[:-2])
    if c_mode in ("c", "c16"):
        return storage, d, c
    d.copy_(c)
    return storage, d, d


def check_dense(dtype_name, letters, out, c_mode, m, n, k, spare_columns=0, device="cpu"):
    gen = generator(m * 7 + n + k, device)
    a, b = dense_operands(letters, m, n, k, DTYPES[dtype_name], gen, device, spare_columns)
    storage, d, c = output_and_c((m, n), out_dtype(dtype_name, out), c_mode, gen, device)
    reference, magnitudes = dense_reference(letters, a, b, c)  # before the call, which overwrites c when it is d

    getattr(fgemm, f"{dtype_name}_gemm_{letters}")(a, b, d, c)

    assert_close(d, reference, magnitudes)
    assert outside(storage, d).isnan().all()
    return d


def check_contiguous(dtype_name, letters, out, use_psum_layout, rows_per_group, tail, n, k, device="cpu"):
    gen = generator(sum(rows_per_group) + tail + n, device)
    groups = group_of_rows(rows_per_group, tail).to(device)
    dtype = DTYPES[dtype_name]
    a = matrix(groups.numel(), k, dtype, gen, device)
    b = matrix(*((n, k) if letters == "nt" else (k, n)), dtype, gen, device, lead=(len(rows_per_group),))
    storage, d = nan_poisoned_slice((groups.numel(), n), out_dtype(dtype_name, out), device)

    getattr(fgemm, f"m_grouped_{dtype_name}_gemm_{letters}_contiguous")(
        a, b, d, grouped_layout(rows_per_group, tail, use_psum_layout, device), use_psum_layout=use_psum_layout)

    owned = groups >= 0
    reference, magnitudes = contiguous_reference(letters[1], a, b, groups)
    assert_close(d[owned], reference[owned], magnitudes[owned])
    assert d[~owned].isnan().all()
    assert outside(storage, d).isnan().all()


def masked_operands(dtype_name, groups, m_max, n, k, device="cpu"):
    gen = generator(m_max + n + k, device)
    dtype = DTYPES[dtype_name]
    return matrix(m_max, k, dtype, gen, device, lead=(groups,)), matrix(n, k, dtype, gen, device, lead=(groups,))


def check_masked_rows(a, b, d, masked_m):
    """Group g's first masked_m[g] rows of d are its product, the rows after them still NaN."""
    for group, rows in enumerate(masked_m):
        assert_close(d[group, :rows], *dense_reference("nt", a[group, :rows], b[group]))
        assert d[group, rows:].isnan().all()


def check_masked(dtype_name, out, masked_m, m_max, n, k, device="cpu"):
    groups = len(masked_m)
    a, b = masked_operands(dtype_name, groups, m_max, n, k, device)
    storage, d = nan_poisoned_slice((groups, m_max, n), out_dtype(dtype_name, out), device)

    getattr(fgemm, f"m_grouped_{dtype_name}_gemm_nt_masked")(
        a, b, d, torch.tensor(masked_m, dtype=torch.int32, device=device), max(1, sum(masked_m) // groups))

    check_masked_rows(a, b, d, masked_m)
    assert outside(storage, d).isnan().all()


def check_k_grouped(dtype_name, c_mode, ks, m, n, device="cpu"):
    gen = generator(sum(ks) + m + n, device)
    dtype = DTYPES[dtype_name]
    a = matrix(sum(ks), m, dtype, gen, device, spare_columns=1)
    b = matrix(sum(ks), n, dtype, gen, device)
    storage, d, c = output_and_c((len(ks), m, n), torch.float32, c_mode, gen, device)
    reference, magnitudes = k_grouped_reference(a, b, ks, c)  # before the call, which overwrites c when it is d

    getattr(fgemm, f"k_grouped_{dtype_name}_gemm_tn_contiguous")(
        a, b, d, ks, torch.tensor(ks, dtype=torch.int32, device=device), c)

    assert_close(d, reference, magnitudes)
    for group in (g for g, k in enumerate(ks) if k == 0):  # an empty expert's D is C, or zeros
        assert torch.equal(d[group], reference[group].float())
    assert outside(storage, d).isnan().all()
