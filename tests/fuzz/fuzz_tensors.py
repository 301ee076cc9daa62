"""The tensors of a fuzz case: every operand and output lies inside a poisoned storage (a spare row above and
below each matrix, spare columns on the right), so that a read past an operand's edge spoils the result and a
write past D's edge shows in its storage. The poison is NaN; integer tensors, which have none, take their least
value (int8 -128, whose products past K change the sums; int32 -2^31, which no INT32 sum of a case reaches)."""

import torch

import fgemm

TORCH_DTYPES = {"fp8": torch.float8_e4m3fn, "bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
                "int8": torch.int8, "int32": torch.int32}


def elements_per_16_bytes(dtype):
    return 16 // torch.empty((), dtype=dtype).element_size()


def poison(dtype):
    return float("nan") if dtype.is_floating_point else torch.iinfo(dtype).min


def poisoned(tensor):
    """Where `tensor` holds the poison of its type."""
    return tensor.isnan() if tensor.is_floating_point() else tensor == poison(tensor.dtype)


def poisoned_storage(shape, dtype, device, extra_units):
    """(storage, view): view has `shape` ([rows, cols] or [G, rows, cols]) at row 1 of each poisoned matrix
    of storage, whose rows hold `cols` rounded up to 16 bytes plus `extra_units` more 16-byte units (at least
    one unit, so that even a view with no columns has the strides the TMA takes)."""
    *lead, rows, cols = shape
    unit = elements_per_16_bytes(dtype)
    width = max(1, -(-cols // unit) + extra_units) * unit
    storage = torch.full((*lead, rows + 2, width), poison(dtype), dtype=dtype, device=device)
    return storage, storage[..., 1:rows + 1, :cols]


def stored(values, dtype, extra_units):
    """`values` converted to `dtype` and copied into a poisoned storage: the view."""
    _, view = poisoned_storage(values.shape, dtype, values.device, extra_units)
    view.copy_(values)
    return view


def random_normal(shape, dtype, generator, device):
    """Standard normal values rounded to `dtype`, as a contiguous tensor."""
    return torch.randn(shape, generator=generator, device=device).to(dtype)


def block_magnitudes(shape, rows_per_block, generator, device):
    """Factors 2^-4 .. 2^4, one per rows_per_block x 128 block of a [.., rows, K] tensor, so that the quantizer's
    scales differ between blocks and one applied to the wrong block shows."""
    *lead, rows, k = shape
    blocks = (*lead, -(-rows // rows_per_block), -(-k // 128))
    exponents = torch.randint(-4, 5, blocks, generator=generator, device=device).float()
    factors = torch.exp2(exponents).repeat_interleave(rows_per_block, dim=-2).repeat_interleave(128, dim=-1)
    return factors[..., :rows, :k]


def fp8_activations(shape, generator, device):
    """(a, sfa): normal values of varying magnitude quantized per 1 x 128 ([rows, K] or [G, rows, K])."""
    x = torch.randn(shape, generator=generator, device=device) * block_magnitudes(shape, 1, generator, device)
    return fgemm.per_token_cast_to_fp8(x)


def fp8_weights(shape, generator, device):
    """(b, sfb): normal values of varying magnitude quantized per 128 x 128 ([N, K] or [G, N, K])."""
    w = torch.randn(shape, generator=generator, device=device) * block_magnitudes(shape, 128, generator, device)
    return fgemm.per_block_cast_to_fp8(w)


def sfa_as_given(sfa, layout):
    """The activation scales as the case hands them to fgemm: row-major as the quantizer returns them, or
    MN-major and TMA-aligned."""
    return fgemm.get_mn_major_tma_aligned_tensor(sfa) if layout == "mn-major" else sfa


def int8_values(shape, extremes, generator, device):
    """Random int8 values, or only the extremes -128 and 127."""
    if extremes:
        high = torch.rand(shape, generator=generator, device=device) < 0.5
        return torch.where(high, 127, -128).to(torch.int8)
    return torch.randint(-128, 128, shape, generator=generator, device=device, dtype=torch.int8)


def int8_scales(shape, generator, device):
    """Positive FP32 scales from 2^-12 to 2^-6, up to 64 times apart, so that one applied to the wrong row or
    block shows; small enough that FP16 D holds the scaled sums of K in the thousands."""
    exponents = torch.randint(-12, -6, shape, generator=generator, device=device).float()
    return torch.exp2(exponents) * (1 + torch.rand(shape, generator=generator, device=device))


def int8_row_scales(form, lead, rows, generator, device):
    """(scales, the scale of each row [*lead, rows]): the per-token or per-channel scales of an INT8 operand
    [*lead, rows, K] in the form the case gives them: "vector" [*lead, rows], "column" [*lead, rows, 1], "row"
    [1, rows], or "one", a scale for the whole tensor (0-d) or for each expert ([G])."""
    shape = {"vector": (*lead, rows), "column": (*lead, rows, 1), "row": (1, rows), "one": tuple(lead)}[form]
    scales = int8_scales(shape, generator, device)
    return scales, scales.reshape(*lead, 1 if form == "one" else rows).expand(*lead, rows)


def index_tensor(values, device):
    return torch.tensor(values, dtype=torch.int32, device=device)
