"""What a fuzz case's D must satisfy, as a list of problems (empty when it passes).

- storage outside D untouched (still the poison of fuzz_tensors: NaN, or -2^31 around an int32 D): nothing
  written past D's edges;
- D's kept rows (padding of the contiguous layout, rows past masked_m) still the poison;
- every other row free of the poison, `calc_diff` against the FP64 reference below the bound of its precision
  (1e-5 for BF16, FP16 and INT8 operands; 1e-3 for FP8, ARCHITECTURE.md, Semantics), and every element within
  a bound of its own: the rounding of D's type relative to the element (or its spacing among subnormal
  numbers), plus the accumulation's error relative
  to the sum of the absolute values of its terms. So a few wrong elements that calc_diff would average away (a
  wrong partial tile at an edge, a small expert) are caught too, and an element that cancels to almost 0 is not
  held to its own size. The exact INT32 product (int32 D) must equal the reference bit for bit.
"""

import dataclasses

import torch

import fgemm
from fuzz_tensors import TORCH_DTYPES, poisoned
from operands import outside


@dataclasses.dataclass(frozen=True)
class Tolerance:
    calc_diff: float
    rounding: float  # of |reference|: the rounding of D's type
    subnormal: float  # the spacing of D's type below its smallest normal number (FP16: 2^-24)
    accumulation: float  # of the sum of the terms' absolute values


# D's rounding: half a unit in the last place, at most 2^-8 of the value for BF16 (8 significant bits) and 2^-11
# for FP16 (11), the latter doubled; FP32 D has none to speak of.
ROUNDING = {"bf16": 2.0**-8, "fp16": 2.0**-10, "fp32": 2.0**-20}
# FP32 accumulators lose a few units of 2^-24 per addition (2^-14 leaves room for K in the thousands); the
# FP8 tensor cores accumulate at reduced precision between promotions. INT8's sums are exact in INT32; their
# scaling and the blocks' promotion into FP32 round as the 16-bit kinds' accumulators do.
ACCUMULATION = {"bf16": 2.0**-14, "fp16": 2.0**-14, "fp8": 2.0**-10, "int8": 2.0**-14}
# The CPU computes FP8's 1D1D recipe as a BF16 GEMM of the dequantized operands, each element rounded once to
# BF16 (src/cpu/dequantize_row_blocks.hpp): each factor of a product off by up to 2^-8, the product by 2^-7.
CPU_ROW_BLOCKS_ACCUMULATION = 2.0**-7
# The exact INT32 product: every element as the reference (each int32 is exact in FP64), calc_diff unbounded.
EXACT = Tolerance(calc_diff=float("inf"), rounding=0.0, subnormal=0.0, accumulation=0.0)


def tolerance(layout, out, device):
    if out == "int32":
        return EXACT
    info = torch.finfo(TORCH_DTYPES[out])
    accumulation = ACCUMULATION[layout.dtype]
    if layout.scales_b_per_row and device == "cpu":
        accumulation = CPU_ROW_BLOCKS_ACCUMULATION
    return Tolerance(calc_diff=1e-3 if layout.dtype == "fp8" else 1e-5, rounding=ROUNDING[out],
                     subnormal=info.smallest_normal * info.eps, accumulation=accumulation)


def check(outcome, tol):
    """(problems, calc_diff over D's computed rows; NaN where there are none or they hold the poison)."""
    found = []
    if not poisoned(outside(outcome.storage, outcome.d)).all():
        found.append("elements outside D's view were written")
    n = outcome.d.shape[-1]
    got, expected, kept = outcome.d.reshape(-1, n), outcome.expected.reshape(-1, n), outcome.kept
    magnitude = outcome.magnitude.reshape(-1, n)[~kept]
    written = ~poisoned(got[kept])
    if written.any():
        found.append(f"{int(written.any(1).sum())} rows that must keep their values were written")
    got, expected = got[~kept], expected[~kept]
    unwritten = poisoned(got)
    if unwritten.any():
        rows = unwritten.any(1).nonzero().squeeze(1)
        found.append(f"{'NaN' if got.is_floating_point() else 'the sentinel -2^31'} in {int(unwritten.sum())} "
                     f"elements of {rows.numel()} computed rows (the first: computed row {int(rows[0])})")
        return found, float("nan")
    got = got.double()
    diff = fgemm.calc_diff(got, expected) if got.numel() else float("nan")
    if diff >= tol.calc_diff:
        found.append(f"calc_diff {diff:.3e} >= {tol.calc_diff:.0e}")
    bound = tol.rounding * expected.abs() + tol.subnormal + tol.accumulation * magnitude
    wrong = (got - expected).abs() > bound
    if wrong.any():
        row, col = (int(i) for i in wrong.nonzero()[0])
        found.append(f"{int(wrong.sum())} elements beyond their bound, the first at computed row {row}, column "
                     f"{col}: {float(got[row, col]):.6g} instead of {float(expected[row, col]):.6g}")
    return found, diff
