"""deep_gemm.testing as fgemm provides it: calc_diff; DeepGEMM's benchmark helpers raise NotImplementedError
(fgemm's own benchmarks are in bench/)."""

from fgemm.deep_gemm._missing import not_implemented_group
from fgemm.numeric import calc_diff

_MISSING = not_implemented_group("benchmark helpers in deep_gemm.testing", "bench bench_kineto count_bytes")
globals().update(_MISSING)

IMPLEMENTED = ["calc_diff"]
__all__ = IMPLEMENTED + sorted(_MISSING)
