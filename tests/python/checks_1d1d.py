"""Checks of the FP8 weight-gradient GEMMs, recipe 1D1D (A and B both scaled per 1x128 block along K), shared by
the CPU and GPU tests: random operands quantized with fgemm's quantizers, D poisoned with NaN before the call,
and a float64 reference of the dequantized operands."""

import torch

import fgemm
from operands import assert_each_element_close

# calc_diff against float64 of the dequantized operands: the GPU promotes each K block exactly in FP32; the CPU
# rounds each dequantized element to BF16 first (src/cpu/dequantize_row_blocks.hpp).
TOLERANCE = {"cuda": 1e-5, "cpu": 2e-5}
# And each element on its own, so that a few wrong ones among millions fail too, within the bound of a dot
# product's rounding: D's own (2^-8 of the element for BF16) plus a part of the sum of the magnitudes of its
# products, sum_k |a_k b_k|: the CPU rounds each dequantized operand to BF16 (2^-9 each); the GPU's tensor cores
# keep about 14 bits while they sum a K block. A wrong element of C (16 x N(0, 1)) is off by several times the
# CPU's bound and tens of times the GPU's in these tests.
MAGNITUDE_TOLERANCE = {"cuda": 2.0**-11, "cpu": 2.0**-8}


def quantize_rows(x: torch.Tensor, mn_major: bool):
    """x [R, K] -> (codes, scales [R, ceil(K/128)]) per 1x128 block, scales MN-major (TMA-aligned) or row-major."""
    return fgemm.per_token_cast_to_fp8(x, mn_major_scales=mn_major)


def dequantize(codes: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    k = codes.size(-1)
    return codes.double() * scales.double().repeat_interleave(128, dim=-1)[..., :k]


def products_and_magnitudes(a8, sfa, b8, sfb):
    """A B^T of the dequantized operands in float64, and |A| |B|^T: each element's sum_k |a_k b_k|."""
    a_values, b_values = dequantize(a8, sfa), dequantize(b8, sfb)
    return a_values @ b_values.T, a_values.abs() @ b_values.abs().T


def poisoned(shape, dtype, device):
    return torch.full(shape, float("nan"), dtype=dtype, device=device)


def c_dtype(c_mode, out):
    """C's dtype: d's where C is D or of d's type ("c16"), else FP32."""
    return out if c_mode in ("d", "c16") else torch.float32


def check_normal(m, n, k, out, device, c_mode=None, mn_major=True, seed=0, calls=1):
    """fp8_gemm_nt with sfb [N, ceil(K/128)]: c_mode None (no C), "c" (a separate FP32 C), "c16" (a separate C of
    d's 16-bit type) or "d" (C is D). With calls > 1 (not where C is D, which each call adds to), the GEMM runs that
    many times into freshly poisoned outputs, each checked against the one reference."""
    assert calls == 1 or c_mode != "d", "a D that C is accumulates over calls"
    generator = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=generator).to(device)
    b = torch.randn(n, k, generator=generator).to(device) * 3
    a8, sfa = quantize_rows(a, mn_major)
    b8, sfb = quantize_rows(b, mn_major)
    reference, magnitudes = products_and_magnitudes(a8, sfa, b8, sfb)
    c = None
    if c_mode is not None:
        c = (torch.randn(m, n, generator=generator) * 16).to(device, c_dtype(c_mode, out))
        reference = reference + c.double()
    for call in range(calls):
        d = c if c_mode == "d" else poisoned((m, n), out, device)
        fgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, c, recipe=(1, 1, 128))
        assert not d.isnan().any(), (m, n, k, out, call)
        diff = fgemm.calc_diff(d.double(), reference)
        assert diff < TOLERANCE[device], (m, n, k, out, c_mode, mn_major, call, diff)
        assert_each_element_close(d, reference, magnitudes, MAGNITUDE_TOLERANCE[device],
                                  (m, n, k, out, c_mode, mn_major, call))


def k_grouped_operands(ks, m, n, device, mn_major=True, seed=0):
    """The flat per-expert blocks of k_grouped_fp8_gemm_nt_contiguous, the float64 products A_g B_g^T and the
    sums of their terms' magnitudes |A_g| |B_g|^T."""
    generator = torch.Generator().manual_seed(seed)
    a_blocks, b_blocks, sfa_blocks, sfb_blocks, products, magnitudes = [], [], [], [], [], []
    for k in ks:
        if k == 0:
            products.append(torch.zeros(m, n, dtype=torch.float64, device=device))
            magnitudes.append(products[-1])
            continue
        a8, sfa = quantize_rows(torch.randn(m, k, generator=generator).to(device), mn_major)
        b8, sfb = quantize_rows(torch.randn(n, k, generator=generator).to(device), mn_major)
        a_blocks.append(a8.flatten())
        b_blocks.append(b8.flatten())
        sfa_blocks.append(sfa)
        sfb_blocks.append(sfb)
        product, magnitude = products_and_magnitudes(a8, sfa, b8, sfb)
        products.append(product)
        magnitudes.append(magnitude)
    empty = torch.empty(0, dtype=torch.float8_e4m3fn, device=device)
    a = torch.cat(a_blocks) if a_blocks else empty
    b = torch.cat(b_blocks) if b_blocks else empty
    sfa = torch.cat(sfa_blocks, dim=1) if sfa_blocks else torch.empty(m, 0, device=device)
    sfb = torch.cat(sfb_blocks, dim=1) if sfb_blocks else torch.empty(n, 0, device=device)
    if mn_major:  # the concatenation of MN-major blocks is row-major: make it MN-major again
        sfa = fgemm.get_mn_major_tma_aligned_tensor(sfa)
        sfb = fgemm.get_mn_major_tma_aligned_tensor(sfb)
    return (a, sfa), (b, sfb), torch.stack(products), torch.stack(magnitudes)


def check_k_grouped(ks, m, n, device, c_mode="c", out=torch.float32, mn_major=True, seed=0):
    """k_grouped_fp8_gemm_nt_contiguous into d of dtype `out`: c_mode "c" (a separate FP32 C), "c16" (a separate
    C of d's 16-bit type), "d" (C is D) or None (no C, BF16 out: the gradient alone)."""
    a, b, products, magnitudes = k_grouped_operands(ks, m, n, device, mn_major, seed)
    generator = torch.Generator().manual_seed(seed + 1)
    shape = (len(ks), m, n)
    c = None if c_mode is None else (torch.randn(*shape, generator=generator) * 16).to(device, c_dtype(c_mode, out))
    reference = products if c is None else products + c.double()
    d = c if c_mode == "d" else poisoned(shape, out, device)
    ks_tensor = torch.tensor(ks, dtype=torch.int32, device=device)
    fgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, ks_tensor, c)
    assert not d.isnan().any(), (ks, m, n)
    diff = fgemm.calc_diff(d.double(), reference)
    assert diff < TOLERANCE[device], (ks, m, n, c_mode, out, mn_major, diff)
    assert_each_element_close(d, reference, magnitudes, MAGNITUDE_TOLERANCE[device],
                              (ks, m, n, c_mode, out, mn_major))
    for g, k in enumerate(ks):
        if k == 0:  # an expert with no K gets C (rounded to d's type), or zeros
            expected = torch.zeros(m, n, device=device) if c is None else c[g]
            assert torch.equal(d[g], expected.to(out)), (ks, g)
