"""Inputs and the reference result of the tests: the definition of ARCHITECTURE.md, Semantics, evaluated in float64."""

import math

import torch

BLOCK = 128


def random_fp8(shape, generator):
    """FP8 E4M3 values spread over its whole range, subnormals included."""
    magnitudes = 2.0 ** torch.randint(-6, 6, shape, generator=generator)
    values = torch.randn(shape, generator=generator) * magnitudes
    return values.clamp(-448, 448).to(torch.float8_e4m3fn)


def random_scales(shape, generator):
    """Positive FP32 scales differing by up to 2^6 between blocks, so a scale applied to the wrong block shows."""
    return (torch.rand(shape, generator=generator) + 0.5) * 2.0 ** torch.randint(-3, 3, shape, generator=generator)


def activations(rows, k, generator, groups=None):
    """a [rows, K] and sfa [rows, ceil(K/128)] (with a leading [G] when groups is given)."""
    lead = () if groups is None else (groups,)
    return random_fp8(lead + (rows, k), generator), random_scales(lead + (rows, math.ceil(k / BLOCK)), generator)


def weights(n, k, generator, groups=None):
    """b [N, K] and sfb [ceil(N/128), ceil(K/128)] (with a leading [G] when groups is given)."""
    lead = () if groups is None else (groups,)
    blocks = (math.ceil(n / BLOCK), math.ceil(k / BLOCK))
    return random_fp8(lead + (n, k), generator), random_scales(lead + blocks, generator)


def reference_gemm(a, sfa, b, sfb, c=None):
    """D = C + sum over K blocks kb of sfa[m, kb] * sfb[n // 128, kb] * (A[m, kb block] . B[n, kb block]),
    in float64, for a [M, K], b [N, K]."""
    m, k = a.shape
    n = b.shape[0]
    a64, b64 = a.double(), b.double()
    sfb_per_row = sfb.double().repeat_interleave(BLOCK, dim=0)[:n]
    d = torch.zeros(m, n, dtype=torch.float64) if c is None else c.double().clone()
    for kb in range(math.ceil(k / BLOCK)):
        cols = slice(kb * BLOCK, (kb + 1) * BLOCK)
        d += sfa.double()[:, kb, None] * sfb_per_row[None, :, kb] * (a64[:, cols] @ b64[:, cols].T)
    return d


def nan_poisoned_slice(shape, dtype, device="cpu"):
    """(storage, view): view has `shape` and lies strictly inside a NaN-filled storage, with one spare row
    above and below and spare columns on the right; its row stride stays a multiple of 16 bytes."""
    *lead, rows, cols = shape
    elements_per_16_bytes = 16 // torch.empty((), dtype=dtype).element_size()
    width = math.ceil((cols + 1) / elements_per_16_bytes) * elements_per_16_bytes
    storage = torch.full((*lead, rows + 2, width), float("nan"), dtype=dtype, device=device)
    return storage, storage[..., 1 : rows + 1, :cols]


def assert_matches(d, reference):
    """d (FP32 or BF16) equals the float64 reference within the rounding of its type."""
    scale = reference.abs().max().item() if reference.numel() else 0.0
    rtol = 2.0**-8 if d.dtype == torch.bfloat16 else 1e-5
    torch.testing.assert_close(d.double(), reference, rtol=rtol, atol=1e-5 * scale, equal_nan=False)


# Half a unit in the last place of D's type, relative: the rounding of the result into D.
ROUNDING_OF_D = {torch.bfloat16: 2.0**-8, torch.float16: 2.0**-11, torch.float32: 2.0**-23}


def assert_each_element_close(d, reference, magnitudes, tolerance, context=()):
    """Every element of d within the rounding of its type of the float64 reference, plus `tolerance` times its
    magnitude sum_k |a_k b_k| (|A| |B|^T), the scale of what summing the products can lose. calc_diff alone does not
    notice a few hundred wrong elements among millions."""
    if d.numel() == 0:
        return
    bound = ROUNDING_OF_D[d.dtype] * reference.abs() + tolerance * magnitudes
    excess = (d.double() - reference).abs() / bound.clamp_min(1e-300)  # bound 0: C alone, copied exactly
    assert excess.max() <= 1, (*context, f"{int((excess > 1).sum())} elements out of bounds, the worst at "
                               f"{excess.argmax().item()} (flat index) by {excess.max().item():.2f}x")


def outside(storage, view):
    """The elements of storage that view does not cover."""
    mask = torch.ones_like(storage, dtype=torch.bool)
    view_mask = mask.as_strided(view.shape, view.stride(), view.storage_offset())
    view_mask.fill_(False)
    return storage[mask]
