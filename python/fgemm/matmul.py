"""fgemm.matmul: a @ b for unquantized torch tensors or NumPy arrays, quantized by fgemm's own kernels."""

import logging
from typing import Optional, Union

import torch

try:  # NumPy is optional: without it, matmul takes torch tensors only.
    import numpy as np
except ImportError:
    np = None

from ._buffers import ceil_div
from .gemm import fp8_gemm_nt
from .gemm_16bit import bf16_gemm_nn, fp16_gemm_nn
from .quantize import per_block_cast_to_fp8, per_token_cast_to_fp8
from .support import is_supported

logger = logging.getLogger("fgemm")

PRECISIONS = ("fp8", "int8", "bf16", "fp16", "auto")
# Precisions of the interface whose GEMMs this build does not have yet.
_NOT_BUILT = {"int8": "INT8"}
# The FP8 GEMM needs K to be a multiple of 16 (16-byte rows of FP8), the 16-bit ones K and N multiples of 8
# (16-byte rows of a [M, K] and b [K, N]); zero rows and columns added to the operands change neither the
# scales nor the products.
_K_MULTIPLE = 16
_16BIT_MULTIPLE = 8
# The outputs a precision's GEMM writes: the one asked for where it is among them, else FP32 (then converted).
_GEMM_OUT_DTYPES = {
    "fp8": (torch.bfloat16, torch.float32),
    "bf16": (torch.bfloat16, torch.float32),
    "fp16": (torch.float16, torch.float32),
}

# The annotation names NumPy's array where NumPy is installed (the forward reference is for type checkers).
Matrix = Union[torch.Tensor, np.ndarray if np is not None else "numpy.ndarray"]


def auto_precision(device=None) -> str:
    """The precision matmul(precision="auto") uses on `device` (a torch.device or str; None: the CPU).

    FP8, on a Hopper GPU and on the CPU; BF16 and FP16 run when asked for by name. A device that is neither
    raises RuntimeError: fgemm has no GEMM there.
    """
    device = torch.device("cpu") if device is None else torch.device(device)
    if device.type == "cpu" or is_supported(device):
        return "fp8"
    raise RuntimeError(f"fgemm has no GEMM for device '{device}': it runs on the CPU and on Hopper GPUs "
                       f"(compute capability 9.0)")


def _is_numpy(x) -> bool:
    return np is not None and isinstance(x, np.ndarray)


def _as_tensor(x, name: str) -> torch.Tensor:
    if _is_numpy(x):
        x = torch.from_numpy(x)
    elif not isinstance(x, torch.Tensor):
        raise TypeError(f"fgemm.matmul: argument '{name}' expected a torch.Tensor or a numpy.ndarray, got "
                        f"{type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"fgemm.matmul: argument '{name}' expected a floating-point matrix, got {x.dtype}")
    if x.dim() != 2:
        raise ValueError(f"fgemm.matmul: argument '{name}' expected a matrix (2 dimensions), got shape "
                         f"{list(x.shape)}")
    return x


def _out_dtype(out_dtype, a: torch.Tensor, b: torch.Tensor, numpy_out: bool) -> torch.dtype:
    """out_dtype as a torch dtype; None gives the dtype torch.matmul would return (that of a and b)."""
    if out_dtype is None:
        return torch.result_type(a, b)
    if not isinstance(out_dtype, torch.dtype):
        try:
            out_dtype = torch.from_numpy(np.empty(0, dtype=out_dtype)).dtype
        except TypeError:
            raise TypeError(f"fgemm.matmul: argument 'out_dtype' expected a floating-point torch or NumPy dtype, "
                            f"got {out_dtype!r}") from None
    if not out_dtype.is_floating_point or (numpy_out and out_dtype == torch.bfloat16):
        kind = "NumPy's float16, float32 or float64" if numpy_out else "a floating-point dtype"
        raise TypeError(f"fgemm.matmul: argument 'out_dtype' expected {kind}, got {out_dtype}")
    return out_dtype


def _resolve_precision(precision, device: torch.device) -> str:
    """The precision to compute in: `precision` itself, or auto_precision's choice for "auto"."""
    if precision not in PRECISIONS:
        raise ValueError(f"fgemm.matmul: argument 'precision' expected one of {PRECISIONS}, got {precision!r}")
    if precision in _NOT_BUILT:
        built = ", ".join(repr(name) for name in _MATMULS)
        raise NotImplementedError(f"{_NOT_BUILT[precision]} GEMMs are not available in this build; fgemm.matmul "
                                  f"has precision {built} (or 'auto')")
    if precision == "auto":
        precision = auto_precision(device)
        logger.info("fgemm.matmul: precision='auto' chose %r on %s", precision, device)
    return precision


def _fp8_matmul(a: torch.Tensor, b: torch.Tensor, gemm_dtype: torch.dtype) -> torch.Tensor:
    """a [M, K] @ b [K, N] through one FP8 GEMM: a quantized per 1x128 block, b^T [N, K] per 128x128 block."""
    (m, k), n = a.shape, b.shape[1]
    pad_k = max(_K_MULTIPLE, ceil_div(k, _K_MULTIPLE) * _K_MULTIPLE) - k
    a_padded = torch.nn.functional.pad(a, (0, pad_k))
    b_t_padded = torch.nn.functional.pad(b.T, (0, pad_k))
    # D's rows as wide as a contiguous D needs (16 bytes); the GEMM writes the first n columns.
    d = torch.empty(m, ceil_div(max(n, 1), 8) * 8, dtype=gemm_dtype, device=a.device)[:, :n]
    if n > 0:
        fp8_gemm_nt(per_token_cast_to_fp8(a_padded, mn_major_scales=True), per_block_cast_to_fp8(b_t_padded), d)
    return d


def _16bit_matmul(dtype: torch.dtype, gemm):
    """a [M, K] @ b [K, N] through one NN GEMM of the operands rounded to `dtype` (bfloat16 or float16)."""

    def multiply(a: torch.Tensor, b: torch.Tensor, gemm_dtype: torch.dtype) -> torch.Tensor:
        (m, k), n = a.shape, b.shape[1]
        pad_k = max(_16BIT_MULTIPLE, ceil_div(k, _16BIT_MULTIPLE) * _16BIT_MULTIPLE) - k
        width = ceil_div(max(n, 1), _16BIT_MULTIPLE) * _16BIT_MULTIPLE
        a_padded = torch.nn.functional.pad(a.to(dtype), (0, pad_k))
        b_padded = torch.nn.functional.pad(b.to(dtype), (0, width - n, 0, pad_k))[:, :n]
        d = torch.empty(m, width, dtype=gemm_dtype, device=a.device)[:, :n]
        if n > 0:
            gemm(a_padded, b_padded, d)
        return d

    return multiply


# The built precisions and their implementations.
_MATMULS = {
    "fp8": _fp8_matmul,
    "bf16": _16bit_matmul(torch.bfloat16, bf16_gemm_nn),
    "fp16": _16bit_matmul(torch.float16, fp16_gemm_nn),
}


def matmul(a: Matrix, b: Matrix, *, precision: str = "auto", out_dtype=None,
           device: Optional[Union[torch.device, str]] = None) -> Matrix:
    """a @ b, as torch.matmul for matrices, computed by fgemm's GEMM of the chosen precision.

    a [M, K] and b [K, N]: torch tensors or NumPy arrays of any floating-point dtype, both of one kind. With
    precision "fp8" both are quantized by fgemm's quantizers: FP8 (E4M3) with a scale per 1x128 block of a and
    per 128x128 block of b; with "bf16" or "fp16" both are rounded to that type. Products are accumulated in
    FP32 (see the README for the error against FP64). Any M, N and K.

    precision: "fp8", "bf16", "fp16", or "auto" for the precision auto_precision gives on the device (FP8 on a
    Hopper GPU and on the CPU; the choice is logged at INFO level on the "fgemm" logger). "int8" is not built
    yet and raises NotImplementedError.
    out_dtype: the result's dtype (torch or NumPy); None: that of a and b, as torch.matmul.
    device: where to compute (a torch.device or str); None: a's device for tensors, the CPU for NumPy arrays.

    Returns the kind of object given: a torch tensor on a's device, or a NumPy array.
    """
    numpy_in = _is_numpy(a)
    if _is_numpy(b) != numpy_in and (_is_numpy(b) or isinstance(b, torch.Tensor)):
        raise TypeError(f"fgemm.matmul: argument 'b' expected a {type(a).__name__} like a, got {type(b).__name__}")
    a_tensor, b_tensor = _as_tensor(a, "a"), _as_tensor(b, "b")
    if a_tensor.shape[1] != b_tensor.shape[0]:
        raise ValueError(f"fgemm.matmul: argument 'b' expected shape [K, N] with K = {a_tensor.shape[1]} (the "
                         f"columns of a), got {list(b_tensor.shape)}")
    result_dtype = _out_dtype(out_dtype, a_tensor, b_tensor, numpy_in)
    compute_device = torch.device(device) if device is not None else a_tensor.device
    chosen = _resolve_precision(precision, compute_device)
    gemm_dtype = result_dtype if result_dtype in _GEMM_OUT_DTYPES[chosen] else torch.float32
    multiply = _MATMULS[chosen]
    d = multiply(a_tensor.to(compute_device), b_tensor.to(compute_device), gemm_dtype)
    result = d.to(device=a_tensor.device, dtype=result_dtype).contiguous()
    return result.numpy() if numpy_in else result
