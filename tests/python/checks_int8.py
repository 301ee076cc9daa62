"""One call of an INT8 GEMM, checked, on the CPU or the GPU: random int8 operands (or the extremes -128 and 127),
scales of the recipe the test names, d written inside a poisoned buffer (NaN, or a sentinel for int32), the
computed part against a float64 reference of the dequantized operands (the exact path against int64 sums,
bit for bit), and everything the call must not write still poisoned.

Recipes: "exact" (no scales, D int32), "token" (sa [M], sb [N]), "token2d" (sa [M, 1], sb [1, N]), "tensor"
(0-d sa and sb), "block" (sa [M, ceil(K/128)], sb [ceil(N/128), ceil(K/128)])."""

import math

import torch

import fgemm
from operands import nan_poisoned_slice, outside

BLOCK = 128
ALIGNMENT = fgemm.get_m_alignment_for_contiguous_layout()
# The exact INT32 sums are the whole error before the scales' FP32 products and D's rounding: calc_diff stays
# about 1e-6 for BF16 and FP16 D, so 1e-5 catches any wrong block of elements.
MAX_DIFF = 1e-5
OUT_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
# The int32 D's poison: a value no product of the tests reaches.
SENTINEL = -(2**31)


def generator(seed, device):
    return torch.Generator(device=device).manual_seed(seed)


def int8_matrix(rows, cols, gen, device, lead=(), extremes=False, spare_columns=0):
    """Random int8 values (or only -128 and 127) in a [*lead, rows, cols] view whose rows start on 16-byte
    boundaries, with `spare_columns` 16-byte chunks of padding after each row."""
    width = (max(1, math.ceil(cols / 16)) + spare_columns) * 16
    if extremes:
        bits = torch.randint(0, 2, (*lead, rows, width), generator=gen, device=device)
        storage = torch.where(bits == 1, 127, -128).to(torch.int8)
    else:
        storage = torch.randint(-128, 128, (*lead, rows, width), generator=gen, device=device, dtype=torch.int8)
    return storage[..., :cols]


def float_matrix(rows, cols, gen, device):
    """Random FP32 values in a [rows, cols] view whose rows start on 16-byte boundaries (C, as the TMA takes it)."""
    return torch.randn(rows, max(4, math.ceil(cols / 4) * 4), generator=gen, device=device)[:, :cols]


def positive_scales(shape, gen, device):
    return (torch.rand(shape, generator=gen, device=device) * 0.01 + 0.001).float()


def scales(recipe, rows, n, k, gen, device, lead_a=(), lead_b=()):
    """(sa, sb) of the recipe, for A's rows (per group where lead_a) and B's N rows (per group where lead_b)."""
    if recipe == "token":
        return positive_scales((*lead_a, rows), gen, device), positive_scales((*lead_b, n), gen, device)
    if recipe == "token2d":
        sb_shape = (*lead_b, n) if lead_b else (1, n)
        return positive_scales((*lead_a, rows, 1), gen, device), positive_scales(sb_shape, gen, device)
    if recipe == "tensor":
        if lead_b:  # one scale per expert
            return positive_scales((*lead_a, rows), gen, device), positive_scales(lead_b, gen, device)
        return positive_scales((), gen, device), positive_scales((), gen, device)
    kb, nb = math.ceil(k / BLOCK), math.ceil(n / BLOCK)
    return positive_scales((*lead_a, rows, kb), gen, device), positive_scales((*lead_b, nb, kb), gen, device)


def reference(recipe, a, sa, b, sb, c=None, bias=None):
    """float64 [rows, N] of one matrix a [rows, K] (sa its scales) times b [N, K] (sb), plus bias and c."""
    a64, b64 = a.double(), b.double()
    rows, n, k = a.shape[0], b.shape[0], a.shape[1]
    if recipe == "block":
        sb_rows = sb.double().repeat_interleave(BLOCK, dim=0)[:n]
        d = torch.zeros(rows, n, dtype=torch.float64, device=a.device)
        for kb in range(math.ceil(k / BLOCK)):
            cols = slice(kb * BLOCK, (kb + 1) * BLOCK)
            d += sa.double()[:, kb, None] * sb_rows[None, :, kb] * (a64[:, cols] @ b64[:, cols].T)
    else:
        d = (a64 @ b64.T) * sa.double().reshape(-1, 1).expand(rows, 1) * sb.double().reshape(1, -1).expand(1, n)
    if bias is not None:
        d = d + bias.double()
    return d if c is None else d + c.double()


def assert_close(d, expected):
    assert not d.isnan().any(), "NaN left in the computed part of d"
    diff = fgemm.calc_diff(d, expected)
    assert diff < MAX_DIFF, f"calc_diff {diff:.3g}"


def exact_product(a, b):
    """The int32 A·Bᵀ, wrapping modulo 2^32 as INT32 accumulators do, from int64 sums."""
    sums = a.long().cpu() @ b.long().cpu().T
    return ((sums + 2**31) % 2**32 - 2**31).to(torch.int32).to(a.device)


def check_exact(m, n, k, device, extremes=False, spare_columns=0):
    gen = generator(m * 7 + n + k, device)
    a = int8_matrix(m, k, gen, device, extremes=extremes, spare_columns=spare_columns)
    b = int8_matrix(n, k, gen, device, extremes=extremes)
    width = math.ceil((n + 1) / 4) * 4
    storage = torch.full((m + 2, width), SENTINEL, dtype=torch.int32, device=device)
    d = storage[1 : m + 1, :n]

    fgemm.int8_gemm_nt(a, b, d)

    assert torch.equal(d, exact_product(a, b))
    assert (outside(storage, d) == SENTINEL).all()


def check_normal(recipe, out, m, n, k, device, c_mode=None, bias_dtype=None, extremes=False, spare_columns=0):
    gen = generator(m * 7 + n * 3 + k, device)
    a = int8_matrix(m, k, gen, device, extremes=extremes, spare_columns=spare_columns)
    b = int8_matrix(n, k, gen, device, extremes=extremes)
    sa, sb = scales(recipe, m, n, k, gen, device)
    storage, d = nan_poisoned_slice((m, n), OUT_DTYPES[out], device)
    c = float_matrix(m, n, gen, device) if c_mode == "c" else None
    if c_mode == "c16":  # a C of D's 16-bit type, apart from D
        c = torch.empty_like(storage)[:m, :n].copy_(torch.randn(m, n, generator=gen, device=device))
    if c_mode == "d":  # accumulation into D itself (of any dtype)
        d.copy_(torch.randn(m, n, generator=gen, device=device))
        c = d
    bias = None if bias_dtype is None else torch.randn(n, generator=gen, device=device).to(bias_dtype)
    expected = reference(recipe, a, sa, b, sb, c, bias)  # before the call, which overwrites c when it is d

    fgemm.int8_gemm_nt((a, sa), (b, sb), d, c, bias)

    assert_close(d, expected)
    assert outside(storage, d).isnan().all()


def group_of_rows(rows_per_group, tail=0):
    """int64 [M_sum]: each group's rows from a multiple of the alignment, -1 on the padding rows."""
    groups = []
    for group, rows in enumerate(rows_per_group):
        groups += [-1] * (-len(groups) % ALIGNMENT) + [group] * rows
    return torch.tensor(groups + [-1] * tail, dtype=torch.int64)


def psum_layout(rows_per_group, device):
    ends, start = [], 0
    for rows in rows_per_group:
        ends.append(start + rows)
        start = math.ceil(ends[-1] / ALIGNMENT) * ALIGNMENT
    return torch.tensor(ends, dtype=torch.int32, device=device)


def check_contiguous(recipe, out, rows_per_group, tail, n, k, device, use_psum_layout=False):
    gen = generator(sum(rows_per_group) + tail + n + k, device)
    groups = group_of_rows(rows_per_group, tail).to(device)
    experts = len(rows_per_group)
    m = groups.numel()
    a = int8_matrix(m, k, gen, device)
    b = int8_matrix(n, k, gen, device, lead=(experts,))
    sa, sb = scales(recipe, m, n, k, gen, device, lead_b=(experts,))
    storage, d = nan_poisoned_slice((m, n), OUT_DTYPES[out], device)
    layout = psum_layout(rows_per_group, device) if use_psum_layout else groups.to(torch.int32)

    fgemm.m_grouped_int8_gemm_nt_contiguous((a, sa), (b, sb), d, layout, use_psum_layout=use_psum_layout)

    owned = groups >= 0
    expected = torch.zeros(m, n, dtype=torch.float64, device=device)
    for group in range(experts):
        rows = groups == group
        if rows.any():
            row_sa = sa[rows] if sa.dim() > 0 else sa
            group_sb = sb[group] if recipe != "tensor" else sb[group].reshape(1)
            expected[rows] = reference(recipe, a[rows], row_sa, b[group], group_sb)
    assert_close(d[owned], expected[owned])
    assert d[~owned].isnan().all()
    assert outside(storage, d).isnan().all()


def masked_operands(recipe, masked_m, m_max, n, k, device):
    gen = generator(m_max + n + k + len(masked_m), device)
    groups = len(masked_m)
    a = int8_matrix(m_max, k, gen, device, lead=(groups,))
    b = int8_matrix(n, k, gen, device, lead=(groups,))
    sa, sb = scales("token" if recipe == "tensor" else recipe, m_max, n, k, gen, device, lead_a=(groups,),
                    lead_b=(groups,))
    if recipe == "tensor":  # per token, one scale per expert
        sb = sb[:, :1].squeeze(1).contiguous()
    return a, sa, b, sb


def check_masked_rows(recipe, a, sa, b, sb, d, masked_m):
    for group, rows in enumerate(masked_m):
        group_sb = sb[group] if recipe != "tensor" else sb[group].reshape(1)
        row_sa = sa[group, :rows]
        assert_close(d[group, :rows], reference(recipe, a[group, :rows], row_sa, b[group], group_sb))
        assert d[group, rows:].isnan().all()


def check_masked(recipe, out, masked_m, m_max, n, k, device):
    a, sa, b, sb = masked_operands(recipe, masked_m, m_max, n, k, device)
    storage, d = nan_poisoned_slice((len(masked_m), m_max, n), OUT_DTYPES[out], device)
    counts = torch.tensor(masked_m, dtype=torch.int32, device=device)

    fgemm.m_grouped_int8_gemm_nt_masked((a, sa), (b, sb), d, counts, max(1, sum(masked_m) // len(masked_m)))

    check_masked_rows(recipe, a, sa, b, sb, d, masked_m)
    assert outside(storage, d).isnan().all()
