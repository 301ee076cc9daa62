"""The BF16 and FP16 GEMMs registered as torch.ops.fgemm.* (see _ops.py): one op per function, each with its
kernel (the extension), a fake version and `d` declared as the tensor it writes.

The ops of one kind (dense, m-grouped contiguous, masked, k-grouped) share their signature, so each kind's
ops are made by one function here, from the op's name.
"""

from typing import List, Optional

import torch

from . import _C
from ._ops import _check_one_device

Tensor = torch.Tensor

DENSE = [f"{dtype}_gemm_{letters}" for dtype in ("bf16", "fp16") for letters in ("nt", "nn", "tn", "tt")]
CONTIGUOUS = [f"m_grouped_{dtype}_gemm_{letters}_contiguous" for dtype in ("bf16", "fp16") for letters in ("nt", "nn")]
MASKED = [f"m_grouped_{dtype}_gemm_nt_masked" for dtype in ("bf16", "fp16")]
K_GROUPED = [f"k_grouped_{dtype}_gemm_tn_contiguous" for dtype in ("bf16", "fp16")]


def _dense_op(name: str):
    kernel = getattr(_C, name)

    @torch.library.custom_op(f"fgemm::{name}", mutates_args=("d",))
    def op(a: Tensor, b: Tensor, d: Tensor, c: Optional[Tensor]) -> None:
        kernel(a, b, d, c)

    @op.register_fake
    def _(a, b, d, c):
        _check_one_device(name, a=a, b=b, d=d, c=c)

    return op


def _contiguous_op(name: str):
    kernel = getattr(_C, name)

    @torch.library.custom_op(f"fgemm::{name}", mutates_args=("d",))
    def op(a: Tensor, b: Tensor, d: Tensor, grouped_layout: Tensor, use_psum_layout: bool) -> None:
        kernel(a, b, d, grouped_layout, use_psum_layout=use_psum_layout)

    @op.register_fake
    def _(a, b, d, grouped_layout, use_psum_layout):
        _check_one_device(name, a=a, b=b, d=d, grouped_layout=grouped_layout)

    return op


def _masked_op(name: str):
    kernel = getattr(_C, name)

    @torch.library.custom_op(f"fgemm::{name}", mutates_args=("d",))
    def op(a: Tensor, b: Tensor, d: Tensor, masked_m: Tensor, expected_m: int) -> None:
        kernel(a, b, d, masked_m, expected_m)

    @op.register_fake
    def _(a, b, d, masked_m, expected_m):
        _check_one_device(name, a=a, b=b, d=d, masked_m=masked_m)

    return op


def _k_grouped_op(name: str):
    kernel = getattr(_C, name)

    @torch.library.custom_op(f"fgemm::{name}", mutates_args=("d",))
    def op(a: Tensor, b: Tensor, d: Tensor, ks: List[int], ks_tensor: Tensor, c: Optional[Tensor]) -> None:
        kernel(a, b, d, ks, ks_tensor, c)

    @op.register_fake
    def _(a, b, d, ks, ks_tensor, c):
        _check_one_device(name, a=a, b=b, d=d, ks_tensor=ks_tensor, c=c)

    return op


OPS = {
    **{name: _dense_op(name) for name in DENSE},
    **{name: _contiguous_op(name) for name in CONTIGUOUS},
    **{name: _masked_op(name) for name in MASKED},
    **{name: _k_grouped_op(name) for name in K_GROUPED},
}
