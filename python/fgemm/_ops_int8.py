"""The INT8 GEMMs registered as torch.ops.fgemm.* (see _ops.py): each with its kernel (the extension), a fake
version, and `d` declared as the tensor it writes. The scaled GEMM and the exact INT32 product are two ops, as
their signatures differ."""

from typing import Optional

import torch

from . import _C
from ._ops import _check_one_device

Tensor = torch.Tensor


@torch.library.custom_op("fgemm::int8_gemm_nt", mutates_args=("d",))
def int8_gemm_nt(a: Tensor, sa: Tensor, b: Tensor, sb: Tensor, d: Tensor, c: Optional[Tensor],
                 bias: Optional[Tensor]) -> None:
    _C.int8_gemm_nt((a, sa), (b, sb), d, c, bias)


@int8_gemm_nt.register_fake
def _(a, sa, b, sb, d, c, bias):
    _check_one_device("int8_gemm_nt", a=a, sa=sa, b=b, sb=sb, d=d, c=c, bias=bias)


@torch.library.custom_op("fgemm::int8_gemm_nt_exact", mutates_args=("d",))
def int8_gemm_nt_exact(a: Tensor, b: Tensor, d: Tensor) -> None:
    _C.int8_gemm_nt(a, b, d)


@int8_gemm_nt_exact.register_fake
def _(a, b, d):
    _check_one_device("int8_gemm_nt", a=a, b=b, d=d)


@torch.library.custom_op("fgemm::m_grouped_int8_gemm_nt_contiguous", mutates_args=("d",))
def m_grouped_int8_gemm_nt_contiguous(a: Tensor, sa: Tensor, b: Tensor, sb: Tensor, d: Tensor,
                                      grouped_layout: Tensor, use_psum_layout: bool = False) -> None:
    _C.m_grouped_int8_gemm_nt_contiguous((a, sa), (b, sb), d, grouped_layout, use_psum_layout)


@m_grouped_int8_gemm_nt_contiguous.register_fake
def _(a, sa, b, sb, d, grouped_layout, use_psum_layout=False):
    _check_one_device("m_grouped_int8_gemm_nt_contiguous", a=a, sa=sa, b=b, sb=sb, d=d,
                      grouped_layout=grouped_layout)


@torch.library.custom_op("fgemm::m_grouped_int8_gemm_nt_masked", mutates_args=("d",))
def m_grouped_int8_gemm_nt_masked(a: Tensor, sa: Tensor, b: Tensor, sb: Tensor, d: Tensor, masked_m: Tensor,
                                  expected_m: int) -> None:
    _C.m_grouped_int8_gemm_nt_masked((a, sa), (b, sb), d, masked_m, expected_m)


@m_grouped_int8_gemm_nt_masked.register_fake
def _(a, sa, b, sb, d, masked_m, expected_m):
    _check_one_device("m_grouped_int8_gemm_nt_masked", a=a, sa=sa, b=b, sb=sb, d=d, masked_m=masked_m)
