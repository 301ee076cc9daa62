"""Compiling ahead the GPU kernels a model's GEMMs will need, so that no call waits on the JIT compiler.

fgemm's kernels depend on M only through the configuration its heuristics choose for it, so a warm-up
enumerates the configurations of every M in a range (no GEMM runs) and compiles each kernel once, in parallel
with the GIL released, into the disk cache (FGEMM_CACHE_DIR) and loads it on the device. A later process finds
the kernels in the disk cache.
"""

import logging
import sys
import time
from typing import Iterable, List, NamedTuple, Optional, Tuple

import torch

from . import _C
from .support import is_supported

_log = logging.getLogger("fgemm")

# The operations whose kernels a warm-up compiles, by DeepGEMM's names (FP8's earlier ones too), as the codes of the
# C++ API's GemmOperation.
_OPERATIONS = {
    "fp8_gemm_nt": 0,
    "gemm_fp8_fp8_bf16_nt": 0,
    "m_grouped_fp8_gemm_nt_contiguous": 1,
    "m_grouped_gemm_fp8_fp8_bf16_nt_contiguous": 1,
    "m_grouped_fp8_gemm_nt_masked": 2,
    "m_grouped_gemm_fp8_fp8_bf16_nt_masked": 2,
    "bf16_gemm_nt": 3,
    "bf16_gemm_nn": 4,
    "bf16_gemm_tn": 5,
    "bf16_gemm_tt": 6,
    "m_grouped_bf16_gemm_nt_contiguous": 7,
    "m_grouped_bf16_gemm_nn_contiguous": 8,
    "m_grouped_bf16_gemm_nt_masked": 9,
    "fp16_gemm_nt": 10,
    "fp16_gemm_nn": 11,
    "fp16_gemm_tn": 12,
    "fp16_gemm_tt": 13,
    "m_grouped_fp16_gemm_nt_contiguous": 14,
    "m_grouped_fp16_gemm_nn_contiguous": 15,
    "m_grouped_fp16_gemm_nt_masked": 16,
}
_MASKED = {2, 9, 16}
_FP16 = range(10, 17)


class WarmedKernel(NamedTuple):
    name: str
    compiled: bool  # compiled now; False: found in the disk cache, or loaded already
    seconds: float


def _fail(error, argument: str, what: str):
    raise error(f"fgemm.warmup: argument '{argument}' {what}")


def _operation_code(op, argument: str) -> int:
    name = op if isinstance(op, str) else getattr(op, "__name__", None)
    if name not in _OPERATIONS:
        _fail(ValueError if isinstance(op, str) else TypeError, argument,
              f"expected one of {sorted(_OPERATIONS)} (or the function itself), got {op!r}")
    return _OPERATIONS[name]


def _integer(value, argument: str) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        _fail(TypeError, argument, f"expected an int, got {type(value).__name__}")
    return value.__index__()


def _shape_tuple(shape, index: int, sfa_mn_major: bool) -> tuple:
    """(operation, n, k, num_groups, D's dtype name, with_c, sfa MN-major, psum layout, packed D), as _C.warmup takes
    shapes."""
    where = f"shapes[{index}]"
    if isinstance(shape, dict):
        unknown = set(shape) - {"op", "n", "k", "num_groups", "out_dtype", "with_c", "use_psum_layout", "packed_d"}
        if unknown:
            _fail(ValueError, where, f"has unknown keys {sorted(unknown)}")
        if "op" not in shape or "n" not in shape or "k" not in shape:
            _fail(ValueError, where, "needs the keys 'op', 'n' and 'k'")
        op, n, k = shape["op"], shape["n"], shape["k"]
        groups = shape.get("num_groups", 1)
        out_dtype = shape.get("out_dtype")
        flags = {key: shape.get(key, False) for key in ("with_c", "use_psum_layout", "packed_d")}
    elif isinstance(shape, (tuple, list)) and len(shape) in (3, 4):
        op, n, k = shape[:3]
        groups = shape[3] if len(shape) == 4 else 1
        out_dtype, flags = None, {"with_c": False, "use_psum_layout": False, "packed_d": False}
    else:
        _fail(TypeError, where, "expected (op, n, k), (op, n, k, num_groups) or a dict with the keys op, n, k "
              f"and optionally num_groups, out_dtype, with_c, use_psum_layout, packed_d; got {shape!r}")
    code = _operation_code(op, f"{where}.op")
    sixteen_bit_d = torch.float16 if code in _FP16 else torch.bfloat16
    if out_dtype is None:
        out_dtype = sixteen_bit_d
    if out_dtype not in (sixteen_bit_d, torch.float32):
        _fail(ValueError, f"{where}.out_dtype", f"expected {sixteen_bit_d} or torch.float32, got {out_dtype}")
    for key, flag in flags.items():
        if not isinstance(flag, bool):
            _fail(TypeError, f"{where}.{key}", f"expected a bool, got {type(flag).__name__}")
    groups = _integer(groups, f"{where}.num_groups")
    if code not in _MASKED and groups != 1:
        _fail(ValueError, f"{where}.num_groups", "matters for the masked layout only: leave it 1")
    return (code, _integer(n, f"{where}.n"), _integer(k, f"{where}.k"), groups, str(out_dtype).split(".")[-1],
            flags["with_c"], sfa_mn_major, flags["use_psum_layout"], flags["packed_d"])


def _device_index(device) -> Optional[int]:
    """The CUDA device to load the kernels on, or None to compile into the disk cache only."""
    if device is None:
        return torch.cuda.current_device() if is_supported() else None
    device = torch.device(device) if isinstance(device, (str, int)) and not isinstance(device, bool) else device
    if not isinstance(device, torch.device):
        _fail(TypeError, "device", f"expected a torch.device, a str, an int or None, got {type(device).__name__}")
    if not is_supported(device):
        _fail(ValueError, "device", f"must be a Hopper (sm_90) CUDA device torch can use, got {device}")
    return torch.cuda.current_device() if device.index is None else device.index


class _Progress:
    """A tqdm bar where tqdm is installed, else one line on stderr rewritten after each kernel."""

    def __init__(self):
        try:
            from tqdm import tqdm
        except ImportError:
            self._bar = None
        else:
            self._bar = tqdm(desc="fgemm warm-up", unit="kernel")

    def __call__(self, done: int, total: int):
        if self._bar is not None:
            self._bar.total = total
            self._bar.update(done - self._bar.n)
        else:
            sys.stderr.write(f"\rfgemm warm-up: {done}/{total} kernels")
            sys.stderr.flush()

    def close(self):
        if self._bar is not None:
            self._bar.close()
        else:
            sys.stderr.write("\n")


def warmup(shapes: Iterable, m_range: Tuple[int, int] = (1, 16384), *, device=None, load: bool = True,
           threads: int = 0, progress: bool = False, sfa_layout: str = "mn-major") -> List[WarmedKernel]:
    """Compiles every kernel the GEMMs `shapes` may use for M in `m_range` (inclusive; the masked layout's
    expected_m), and loads them on the device.

    shapes: each (op, n, k) or, for the masked layout, (op, n, k, num_groups); or a dict with the keys op, n, k
    and optionally num_groups, out_dtype (the 16-bit type, torch.bfloat16 or for the FP16 GEMMs torch.float16, by
    default; or torch.float32) and with_c (a GEMM of the normal layout with C: fp8_gemm_nt's FP32 C; the 16-bit
    GEMMs' C of D's type, which may be D itself where D is 16-bit). op is a GEMM's name or the function itself:
    fp8_gemm_nt, m_grouped_fp8_gemm_nt_contiguous, m_grouped_fp8_gemm_nt_masked (or DeepGEMM's earlier names),
    bf16_gemm_nt/nn/tn/tt, m_grouped_bf16_gemm_nt_contiguous, m_grouped_bf16_gemm_nn_contiguous,
    m_grouped_bf16_gemm_nt_masked, and the same of fp16. The contiguous GEMMs' dicts may also say
    use_psum_layout=True (the prefix sums' kernels rather than m_indices') and with it packed_d=True (a D packed by
    d_row_starts). A 16-bit FP32 D accumulated in place is not covered. bf16_gemm_nt and fp16_gemm_nt of
    up to eight rows run a kernel of their own (the few-row kernel), which the warm-up compiles for such M.
    device: the CUDA device to load the kernels on; None: the current one where it is a Hopper GPU, else none.
    load: False compiles into the disk cache only, with no device needed (a machine without a GPU prepares the
    cache of one with an H100: the kernels are chosen for 132 SMs, or set_num_sms's count).
    threads: compiler threads (0: one per core).
    progress: show a progress bar (tqdm if installed, else a line on stderr).
    sfa_layout: "mn-major" (the fast layout, as get_mn_major_tma_aligned_tensor makes it) or "row-major" (the
    scale loader's kernels, for sfa passed as the quantizers return it).

    Returns the kernels: name, whether it was compiled now (else found in the disk cache or loaded already) and
    the seconds it took. Logs a summary at INFO and each kernel at DEBUG on the "fgemm" logger.
    """
    if sfa_layout not in ("mn-major", "row-major"):
        _fail(ValueError, "sfa_layout", f"expected 'mn-major' or 'row-major', got {sfa_layout!r}")
    if isinstance(shapes, (str, bytes, dict)) or not hasattr(shapes, "__iter__"):
        _fail(TypeError, "shapes", f"expected an iterable of shapes, got {type(shapes).__name__}")
    tuples = [_shape_tuple(shape, i, sfa_layout == "mn-major") for i, shape in enumerate(shapes)]
    if not isinstance(m_range, (tuple, list)) or len(m_range) != 2:
        _fail(TypeError, "m_range", f"expected (m_min, m_max), got {m_range!r}")
    m_min, m_max = (_integer(value, "m_range") for value in m_range)
    threads = _integer(threads, "threads")
    if not isinstance(load, bool):
        _fail(TypeError, "load", f"expected a bool, got {type(load).__name__}")
    device_index = _device_index(device) if load else None

    bar = _Progress() if progress else None

    def on_kernel(name: str, compiled: bool, seconds: float, done: int, total: int):
        _log.debug("fgemm warm-up: %s %s in %.2f s", name, "compiled" if compiled else "cached", seconds)
        if bar is not None:
            bar(done, total)

    start = time.perf_counter()
    try:
        kernels = [WarmedKernel(*kernel) for kernel in _C.warmup(tuples, m_min, m_max, device_index, threads,
                                                                  on_kernel)]
    finally:
        if bar is not None:
            bar.close()
    compiled = sum(kernel.compiled for kernel in kernels)
    _log.info("fgemm warm-up: %d kernels (%d compiled, %d from the cache) for %d shapes, M in [%d, %d], "
              "in %.1f s%s", len(kernels), compiled, len(kernels) - compiled, len(tuples), m_min, m_max,
              time.perf_counter() - start, "" if device_index is None else f", loaded on cuda:{device_index}")
    return kernels
