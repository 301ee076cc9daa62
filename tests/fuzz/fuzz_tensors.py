"""The tensors of a fuzz case: every operand and output lies inside a NaN-filled storage (a spare row above and
below each matrix, spare columns on the right), so that a read past an operand's edge turns the result into
NaN and a write past D's edge shows in its storage."""

import torch

import fgemm

TORCH_DTYPES = {"fp8": torch.float8_e4m3fn, "bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def elements_per_16_bytes(dtype):
    return 16 // torch.empty((), dtype=dtype).element_size()


def poisoned_storage(shape, dtype, device, extra_units):
    """(storage, view): view has `shape` ([rows, cols] or [G, rows, cols]) at row 1 of each NaN-filled matrix
    of storage, whose rows hold `cols` rounded up to 16 bytes plus `extra_units` more 16-byte units (at least
    one unit, so that even a view with no columns has the strides the TMA takes)."""
    *lead, rows, cols = shape
    unit = elements_per_16_bytes(dtype)
    width = max(1, -(-cols // unit) + extra_units) * unit
    storage = torch.full((*lead, rows + 2, width), float("nan"), dtype=dtype, device=device)
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


def index_tensor(values, device):
    return torch.tensor(values, dtype=torch.int32, device=device)
