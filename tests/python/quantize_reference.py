"""The quantizers' arithmetic (include/fgemm/quantize.hpp) as torch operations, inputs with special values,
and bitwise comparisons: what the CPU and GPU tests and the benchmark hold fgemm's quantizers to."""

import torch

BLOCK = 128
AMAX_FLOOR = 1e-4
INVERSE_E4M3_MAX = 1.0 / 448.0  # a Python float; multiplied into a float32 tensor it is fl(1/448)


def _pad(x, rows_multiple):
    """x with its last dimension padded with zeros to a multiple of 128, its second last to rows_multiple."""
    rows, cols = x.shape[-2:]
    return torch.nn.functional.pad(x, (0, -cols % BLOCK, 0, -rows % rows_multiple))


def least_power_of_two_at_least(s):
    """2^ceil(log2(s)) of positive float32 values, exactly: from frexp (s = m * 2^e, m in [0.5, 1)) the power
    is 2^(e - 1) when m is 0.5, else 2^e; built from its exponent bits. Infinity and NaN stay as they are."""
    mantissa, exponent = torch.frexp(s)
    power = exponent - (mantissa == 0.5).to(exponent.dtype)
    rounded = ((power + 127) << 23).to(torch.int32).view(torch.float32)
    return torch.where(torch.isfinite(s), rounded, s)


def _scale_and_inverse(amax, use_ue8m0):
    amax = amax.clamp(min=AMAX_FLOOR)
    scale = amax * INVERSE_E4M3_MAX
    if use_ue8m0:
        scale = least_power_of_two_at_least(scale)
        return scale, scale.reciprocal()
    return scale, amax.reciprocal() * 448.0


def per_token(x, use_ue8m0=False):
    """(codes, scales) of x [..., M, K] with one scale per 1 x 128 block."""
    k = x.shape[-1]
    blocks = _pad(x.float(), 1).unflatten(-1, (-1, BLOCK))  # [..., M, KB, 128]
    scale, inverse = _scale_and_inverse(blocks.abs().amax(dim=-1), use_ue8m0)
    codes = (blocks * inverse.unsqueeze(-1)).to(torch.float8_e4m3fn).flatten(-2)[..., :k]
    return codes, scale


def per_block(w, use_ue8m0=False):
    """(codes, scales) of w [..., N, K] with one scale per 128 x 128 block."""
    n, k = w.shape[-2:]
    blocks = _pad(w.float(), BLOCK).unflatten(-1, (-1, BLOCK)).unflatten(-3, (-1, BLOCK))  # [..., NB, 128, KB, 128]
    scale, inverse = _scale_and_inverse(blocks.abs().amax(dim=(-3, -1), keepdim=True), use_ue8m0)
    codes = (blocks * inverse).to(torch.float8_e4m3fn).flatten(-2).flatten(-3, -2)[..., :n, :k]
    return codes, scale.squeeze(-1).squeeze(-2)


def cast_transpose(x, use_ue8m0=False):
    """(codes, scales, transposed codes, transposed scales) of x [M, K]: per_token of x and of its transpose."""
    return (*per_token(x, use_ue8m0), *per_token(x.t(), use_ue8m0))


def padded_to_blocks(x, ks):
    """x [sum(ks), H] with each expert's rows followed by zero rows up to a multiple of 128, and those counts: the
    padded x whose outputs grouped_cast_transpose_to_fp8 of any counts gives (a zero-filled buffer and one
    index_copy_, as torch writes the padding)."""
    padded_counts = [-(-k // BLOCK) * BLOCK for k in ks]
    starts = torch.tensor([0] + padded_counts[:-1], device=x.device).cumsum(0)
    firsts = torch.tensor([0] + list(ks[:-1]), device=x.device).cumsum(0)
    experts = torch.repeat_interleave(torch.arange(len(ks), device=x.device), torch.tensor(ks, device=x.device),
                                      output_size=sum(ks))
    rows = torch.arange(sum(ks), device=x.device) - firsts[experts] + starts[experts]
    return x.new_zeros(sum(padded_counts), x.size(1)).index_copy_(0, rows, x), padded_counts


def grouped_cast_transpose(x, ks, use_ue8m0=False):
    """(codes, scales, flat transposed codes, transposed scales) of x [sum(ks), H]: per_token of x, then of each
    expert's rows transposed, its [H, ks[g]] codes flattened one expert after another and its [H, ks[g] / 128]
    scales side by side."""
    starts = [sum(ks[:g]) for g in range(len(ks))]
    experts = [per_token(x[start : start + k].t(), use_ue8m0) for start, k in zip(starts, ks)]
    h = x.shape[1]
    codes = [c.reshape(-1) for c, _ in experts] or [torch.empty(0, dtype=torch.float8_e4m3fn, device=x.device)]
    scales = [s for _, s in experts] or [torch.empty(h, 0, device=x.device)]
    return (*per_token(x, use_ue8m0), torch.cat([c.view(torch.uint8) for c in codes]).view(torch.float8_e4m3fn),
            torch.cat(scales, dim=1))


def deepgemm_per_token(x):
    """DeepGEMM's reference quantizer, written as it writes it: on CUDA tensors, torch evaluates it with the
    same roundings as fgemm's (448.0 / amax is a reciprocal times 448, amax / 448.0 a product with fl(1/448))."""
    k = x.shape[-1]
    blocks = _pad(x, 1).unflatten(-1, (-1, BLOCK))
    amax = blocks.abs().float().amax(dim=-1).clamp(AMAX_FLOOR)
    codes = (blocks * (448.0 / amax.unsqueeze(-1))).to(torch.float8_e4m3fn).flatten(-2)[..., :k]
    return codes, amax / 448.0


def random_input(shape, dtype, generator, special_values=True):
    """Normal values with magnitudes that change by up to 2^+-24 from row to row, so that scales, subnormal
    codes and the 1e-4 floor all occur; with special_values, one zero block of 128 columns and some 0, +-inf
    and NaN elements. Made on the CPU (reproducible), then in `dtype`."""
    *lead, rows, cols = shape
    magnitudes = 2.0 ** torch.randint(-24, 12, (*lead, rows, 1), generator=generator)
    x = torch.randn(shape, generator=generator) * magnitudes
    if special_values and x.numel() > 0:
        row = torch.randint(0, rows, (1,), generator=generator).item()
        first = BLOCK * torch.randint(0, -(-cols // BLOCK), (1,), generator=generator).item()
        x[..., row, first : first + BLOCK] = 0.0
        flat = x.view(-1)
        picks = torch.randint(0, flat.numel(), (4 * max(1, flat.numel() // 5000),), generator=generator).tolist()
        for i, value in zip(picks, [0.0, float("inf"), float("-inf"), float("nan")] * len(picks)):
            flat[i] = value
    return x.to(dtype)


def is_nan_code(codes):
    return (codes.view(torch.uint8) & 0x7F) == 0x7F


def assert_same_codes(actual, expected, what=""):
    """E4M3 codes bit for bit, except that any NaN matches any NaN (the sign of a NaN is not specified)."""
    assert actual.shape == expected.shape, what
    actual_nan, expected_nan = is_nan_code(actual), is_nan_code(expected)
    assert torch.equal(actual_nan, expected_nan), f"NaN codes differ {what}"
    actual_bits, expected_bits = actual.view(torch.uint8), expected.view(torch.uint8)
    differ = (actual_bits != expected_bits) & ~actual_nan
    assert not differ.any(), f"{int(differ.sum())} codes differ {what}, first at {differ.nonzero()[0].tolist()}"


def assert_same_scales(actual, expected, what=""):
    """float32 values bit for bit, except that any NaN matches any NaN."""
    assert actual.shape == expected.shape, what
    actual_nan, expected_nan = actual.isnan(), expected.isnan()
    assert torch.equal(actual_nan, expected_nan), f"NaN scales differ {what}"
    differ = (actual.view(torch.int32) != expected.view(torch.int32)) & ~actual_nan
    assert not differ.any(), f"{int(differ.sum())} scales differ {what}, first at {differ.nonzero()[0].tolist()}"
