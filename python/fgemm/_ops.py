"""fgemm's operations registered with torch.library as torch.ops.fgemm.*, so that torch.compile, FakeTensor,
meta tensors, functionalization and autograd see them: each op has its kernel (the extension, on CPU and
CUDA tensors), a shape-only (fake) version, and declares the tensor it writes (`d` of the GEMMs).

The public functions (fgemm.fp8_gemm_nt, ...) call these ops whenever torch traces or fakes the call; a plain
eager call on ordinary tensors runs the same kernel without the dispatcher's round trip (see eager.py).
"""

from typing import List, Optional, Tuple

import torch

from . import _C
from ._buffers import (
    cast_transpose_outputs,
    empty_mn_major_scales,
    grouped_cast_transpose_outputs,
    per_block_cast_transpose_outputs,
    per_block_outputs,
    per_token_outputs,
)

Tensor = torch.Tensor


def _check_one_device(op: str, **tensors: Optional[Tensor]) -> None:
    """The fake versions' device check: a meta tensor among real ones is refused with the extension's words
    (a call on meta tensors alone is a shape-only call)."""
    devices = {t.device for t in tensors.values() if t is not None}
    if len(devices) <= 1:
        return
    for name, t in tensors.items():
        if t is not None and t.device.type not in ("cpu", "cuda"):
            raise ValueError(f"fgemm.{op}: argument '{name}' is on device '{t.device}'; fgemm runs tensors on the "
                             f"CPU or on CUDA devices")
    first_name, first = next(iter(tensors.items()))
    for name, t in tensors.items():
        if t is not None and t.device != first.device:
            raise ValueError(f"fgemm.{op}: argument '{name}' is on device '{t.device}', expected the device of "
                             f"'{first_name}' ({first.device})")


# ---- GEMMs: D written in place ---------------------------------------------------------------------------

@torch.library.custom_op("fgemm::fp8_gemm_nt", mutates_args=("d",))
def fp8_gemm_nt(a: Tensor, sfa: Tensor, b: Tensor, sfb: Tensor, d: Tensor, c: Optional[Tensor]) -> None:
    _C.fp8_gemm_nt((a, sfa), (b, sfb), d, c)


@fp8_gemm_nt.register_fake
def _(a, sfa, b, sfb, d, c):
    _check_one_device("fp8_gemm_nt", a=a, sfa=sfa, b=b, sfb=sfb, d=d, c=c)


@torch.library.custom_op("fgemm::m_grouped_fp8_gemm_nt_contiguous", mutates_args=("d",))
def m_grouped_fp8_gemm_nt_contiguous(a: Tensor, sfa: Tensor, b: Tensor, sfb: Tensor, d: Tensor,
                                     m_indices: Tensor, use_psum_layout: bool = False,
                                     d_row_starts: Optional[Tensor] = None) -> None:
    _C.m_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, m_indices, use_psum_layout=use_psum_layout,
                                        d_row_starts=d_row_starts)


@m_grouped_fp8_gemm_nt_contiguous.register_fake
def _(a, sfa, b, sfb, d, m_indices, use_psum_layout=False, d_row_starts=None):
    _check_one_device("m_grouped_fp8_gemm_nt_contiguous", a=a, sfa=sfa, b=b, sfb=sfb, d=d, m_indices=m_indices,
                      d_row_starts=d_row_starts)


@torch.library.custom_op("fgemm::m_grouped_fp8_gemm_nt_masked", mutates_args=("d",))
def m_grouped_fp8_gemm_nt_masked(a: Tensor, sfa: Tensor, b: Tensor, sfb: Tensor, d: Tensor, masked_m: Tensor,
                                 expected_m: int) -> None:
    _C.m_grouped_fp8_gemm_nt_masked((a, sfa), (b, sfb), d, masked_m, expected_m)


@m_grouped_fp8_gemm_nt_masked.register_fake
def _(a, sfa, b, sfb, d, masked_m, expected_m):
    _check_one_device("m_grouped_fp8_gemm_nt_masked", a=a, sfa=sfa, b=b, sfb=sfb, d=d, masked_m=masked_m)


@torch.library.custom_op("fgemm::k_grouped_fp8_gemm_nt_contiguous", mutates_args=("d",))
def k_grouped_fp8_gemm_nt_contiguous(a: Tensor, sfa: Tensor, b: Tensor, sfb: Tensor, d: Tensor, ks: List[int],
                                     ks_tensor: Tensor, c: Optional[Tensor]) -> None:
    _C.k_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, ks, ks_tensor, c)


@k_grouped_fp8_gemm_nt_contiguous.register_fake
def _(a, sfa, b, sfb, d, ks, ks_tensor, c):
    _check_one_device("k_grouped_fp8_gemm_nt_contiguous", a=a, sfa=sfa, b=b, sfb=sfb, d=d, ks_tensor=ks_tensor, c=c)


# ---- Quantizers and the layout helper: new tensors out ---------------------------------------------------
# x and w reach these ops in a dtype the kernels read (bfloat16 or float32), their last dimension contiguous.

def quantize_per_token(x: Tensor, use_ue8m0: bool, mn_major_scales: bool) -> Tuple[Tensor, Tensor]:
    """The kernel of per_token_cast_to_fp8, also called directly by an eager call."""
    x_fp8, sf = per_token_outputs(x, mn_major_scales)
    _C.per_token_cast_to_fp8(x, x_fp8, sf, use_ue8m0)
    return x_fp8, sf


def quantize_per_block(w: Tensor, use_ue8m0: bool) -> Tuple[Tensor, Tensor]:
    """The kernel of per_block_cast_to_fp8, also called directly by an eager call."""
    w_fp8, sf = per_block_outputs(w)
    _C.per_block_cast_to_fp8(w, w_fp8, sf, use_ue8m0)
    return w_fp8, sf


def cast_transpose(x: Tensor, use_ue8m0: bool, mn_major_scales: bool) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """The kernel of cast_transpose_to_fp8, also called directly by an eager call."""
    outputs = cast_transpose_outputs(x, mn_major_scales)
    _C.cast_transpose_to_fp8(x, *outputs, use_ue8m0)
    return outputs


def per_block_cast_transpose(x: Tensor, use_ue8m0: bool) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """The kernel of per_block_cast_transpose_to_fp8, also called directly by an eager call."""
    outputs = per_block_cast_transpose_outputs(x)
    _C.per_block_cast_transpose_to_fp8(x, *outputs, use_ue8m0)
    return outputs


def grouped_cast_transpose(x: Tensor, ks: List[int], use_ue8m0: bool,
                           mn_major_scales: bool) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """The kernel of grouped_cast_transpose_to_fp8, also called directly by an eager call."""
    outputs = grouped_cast_transpose_outputs(x, ks, mn_major_scales)
    _C.grouped_cast_transpose_to_fp8(x, ks, *outputs, use_ue8m0)
    return outputs


def copy_to_mn_major(sf: Tensor) -> Tensor:
    """The kernel of to_mn_major_tma_aligned: a copy of sf [..., M, KB] in the MN-major, TMA-aligned layout."""
    aligned = empty_mn_major_scales(tuple(sf.shape[:-2]), sf.shape[-2], sf.shape[-1], sf.device)
    _C.copy_scales(sf, aligned)
    return aligned


def _register_constant_outputs(op, num_inputs: int) -> None:
    """Quantization and the layout copy have no derivative worth the name: the op's outputs are constants to
    autograd, as the tensors an eager call allocates and fills are, so that a compiled training step whose
    activations require grad traces through the op."""

    def setup_context(ctx, inputs, output):
        ctx.mark_non_differentiable(*(output if isinstance(output, tuple) else (output,)))

    def backward(ctx, *output_grads):  # never called, the outputs being non-differentiable
        return (None,) * num_inputs

    op.register_autograd(backward, setup_context=setup_context)


@torch.library.custom_op("fgemm::per_token_cast_to_fp8", mutates_args=())
def per_token_cast_to_fp8(x: Tensor, use_ue8m0: bool, mn_major_scales: bool) -> Tuple[Tensor, Tensor]:
    return quantize_per_token(x, use_ue8m0, mn_major_scales)


@per_token_cast_to_fp8.register_fake
def _(x, use_ue8m0, mn_major_scales):
    return per_token_outputs(x, mn_major_scales)


@torch.library.custom_op("fgemm::per_block_cast_to_fp8", mutates_args=())
def per_block_cast_to_fp8(w: Tensor, use_ue8m0: bool) -> Tuple[Tensor, Tensor]:
    return quantize_per_block(w, use_ue8m0)


@per_block_cast_to_fp8.register_fake
def _(w, use_ue8m0):
    return per_block_outputs(w)


@torch.library.custom_op("fgemm::cast_transpose_to_fp8", mutates_args=())
def cast_transpose_to_fp8(x: Tensor, use_ue8m0: bool, mn_major_scales: bool) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    return cast_transpose(x, use_ue8m0, mn_major_scales)


@cast_transpose_to_fp8.register_fake
def _(x, use_ue8m0, mn_major_scales):
    return cast_transpose_outputs(x, mn_major_scales)


@torch.library.custom_op("fgemm::per_block_cast_transpose_to_fp8", mutates_args=())
def per_block_cast_transpose_to_fp8(x: Tensor, use_ue8m0: bool) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    return per_block_cast_transpose(x, use_ue8m0)


@per_block_cast_transpose_to_fp8.register_fake
def _(x, use_ue8m0):
    return per_block_cast_transpose_outputs(x)


@torch.library.custom_op("fgemm::grouped_cast_transpose_to_fp8", mutates_args=())
def grouped_cast_transpose_to_fp8(x: Tensor, ks: List[int], use_ue8m0: bool,
                                  mn_major_scales: bool) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    return grouped_cast_transpose(x, ks, use_ue8m0, mn_major_scales)


@grouped_cast_transpose_to_fp8.register_fake
def _(x, ks, use_ue8m0, mn_major_scales):
    return grouped_cast_transpose_outputs(x, ks, mn_major_scales)


@torch.library.custom_op("fgemm::to_mn_major_tma_aligned", mutates_args=())
def to_mn_major_tma_aligned(sf: Tensor) -> Tensor:
    return copy_to_mn_major(sf)


@to_mn_major_tma_aligned.register_fake
def _(sf):
    return empty_mn_major_scales(tuple(sf.shape[:-2]), sf.shape[-2], sf.shape[-1], sf.device)


_register_constant_outputs(per_token_cast_to_fp8, num_inputs=3)
_register_constant_outputs(per_block_cast_to_fp8, num_inputs=2)
_register_constant_outputs(cast_transpose_to_fp8, num_inputs=3)
_register_constant_outputs(per_block_cast_transpose_to_fp8, num_inputs=2)
_register_constant_outputs(grouped_cast_transpose_to_fp8, num_inputs=4)
_register_constant_outputs(to_mn_major_tma_aligned, num_inputs=1)
