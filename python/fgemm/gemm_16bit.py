"""The BF16 and FP16 GEMMs with DeepGEMM's names and calling convention: D = C + A·B in FP32 accumulators,
written in place into d, the layout letters naming how A and B are stored:

    letters  a          b          d = c + ...
    nt       [M, K]     [N, K]     a @ b.T
    nn       [M, K]     [K, N]     a @ b
    tn       [K, M]     [K, N]     a.T @ b
    tt       [K, M]     [N, K]     a.T @ b.T

Each operand's last dimension is contiguous; a transposed view of the other storage order is refused with an
error naming the function that takes it. Every other stride is a multiple of 16 bytes. a and b are both
bfloat16 (bf16_*) or both float16 (fp16_*); d is that dtype or float32; c, where taken, is of d's shape, float32
or d's dtype, and may be d itself (DeepGEMM's accumulation in place); d is rounded once, from C + A·B.

As for the FP8 GEMMs (gemm.py), an eager call on ordinary tensors runs the extension directly; any other call
goes through torch.ops.fgemm (_ops_16bit.py). The functions of one kind share their code and signature, so
each is made below from its name.
"""

from typing import List, Optional, Protocol, Sequence

import torch

from . import _C, _arguments
from ._ops_16bit import CONTIGUOUS, DENSE, K_GROUPED, MASKED, OPS
from .eager import increment_version, runs_eagerly

Tensor = torch.Tensor

_DTYPES = {"bf16": "bfloat16", "fp16": "float16"}
# Per layout letters: (what d receives, a's shape, b's shape, DeepGEMM's default of compiled_dims).
_LETTERS = {
    "nt": ("a @ b^T", "[M, K]", "[N, K]", "nk"),
    "nn": ("a @ b", "[M, K]", "[K, N]", "nk"),
    "tn": ("a^T @ b", "[K, M]", "[K, N]", "mn"),
    "tt": ("a^T @ b^T", "[K, M]", "[N, K]", "mn"),
}
_COMPILED_DIMS_DOC = ("compiled_dims (DeepGEMM's) may be any str: fgemm specialises its kernels on every "
                      "dimension anyway.")


class DenseGemm(Protocol):
    def __call__(self, a: Tensor, b: Tensor, d: Tensor, c: Optional[Tensor] = None,
                 compiled_dims: str = ...) -> None: ...


class ContiguousGemm(Protocol):
    def __call__(self, a: Tensor, b: Tensor, d: Tensor, grouped_layout: Tensor, compiled_dims: str = "nk",
                 use_psum_layout: bool = False) -> None: ...


class MaskedGemm(Protocol):
    def __call__(self, a: Tensor, b: Tensor, d: Tensor, masked_m: Tensor, expected_m: int,
                 compiled_dims: str = "nk") -> None: ...


class KGroupedGemm(Protocol):
    def __call__(self, a: Tensor, b: Tensor, d: Tensor, ks: Sequence[int], ks_tensor: Tensor,
                 c: Optional[Tensor] = None, compiled_dims: str = "mn") -> None: ...


def _dtype_of(name: str) -> str:
    return _DTYPES["bf16" if "bf16" in name else "fp16"]


def _named(function, name: str, doc: str):
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


def _dense(name: str) -> DenseGemm:
    dtype = _dtype_of(name)
    formula, a_shape, b_shape, default_dims = _LETTERS[name[-2:]]
    kernel, op = getattr(_C, name), OPS[name]

    def gemm(a: Tensor, b: Tensor, d: Tensor, c: Optional[Tensor] = None, compiled_dims: str = default_dims) -> None:
        if runs_eagerly(d):
            kernel(a, b, d, c, compiled_dims)
            increment_version(d)
            return
        _arguments.check_compiled_dims(name, compiled_dims)
        op(_arguments.tensor(a, name, "a"), _arguments.tensor(b, name, "b"), _arguments.tensor(d, name, "d"),
           _arguments.optional_tensor(c, name, "c"))

    return _named(gemm, name, f"""D = {formula} (+ C), written into d.

    a {a_shape} and b {b_shape} {dtype}, each with its last dimension contiguous; d [M, N] {dtype} or float32; c
    (optional) [M, N] float32 or d's dtype, possibly d itself. CUDA tensors run on the current torch stream, CPU tensors
    on the CPU backend. {_COMPILED_DIMS_DOC}""")


def _contiguous(name: str) -> ContiguousGemm:
    dtype = _dtype_of(name)
    b_shape = "[G, N, K]" if "_nt_" in name else "[G, K, N]"
    kernel, op = getattr(_C, name), OPS[name]

    def gemm(a: Tensor, b: Tensor, d: Tensor, grouped_layout: Tensor, compiled_dims: str = "nk",
             use_psum_layout: bool = False) -> None:
        if runs_eagerly(d):
            kernel(a, b, d, grouped_layout, compiled_dims, use_psum_layout)
            increment_version(d)
            return
        _arguments.check_compiled_dims(name, compiled_dims)
        use_psum_layout = _arguments.bool_argument(use_psum_layout, name, "use_psum_layout")
        op(_arguments.tensor(a, name, "a"), _arguments.tensor(b, name, "b"), _arguments.tensor(d, name, "d"),
           _arguments.tensor(grouped_layout, name, "grouped_layout"), use_psum_layout)

    return _named(gemm, name, f"""Grouped GEMM, contiguous layout (MoE): row m of d = row m of a times the B of
    its group.

    a [M_sum, K] and b {b_shape} {dtype}; d [M_sum, N] {dtype} or float32. grouped_layout int32 gives the groups:
    [M_sum], the group of each row, -1 for a padding row; or, with use_psum_layout=True, [G], the prefix sums of
    the groups' rows (group g's rows run from grouped_layout[g - 1] rounded up to a multiple of 128, 0 for
    g = 0, to grouped_layout[g]). Rows in no group keep what d held. {_COMPILED_DIMS_DOC}""")


def _masked(name: str) -> MaskedGemm:
    dtype = _dtype_of(name)
    kernel, op = getattr(_C, name), OPS[name]

    def gemm(a: Tensor, b: Tensor, d: Tensor, masked_m: Tensor, expected_m: int, compiled_dims: str = "nk") -> None:
        if runs_eagerly(d):
            kernel(a, b, d, masked_m, expected_m, compiled_dims)
            increment_version(d)
            return
        _arguments.check_compiled_dims(name, compiled_dims)
        op(_arguments.tensor(a, name, "a"), _arguments.tensor(b, name, "b"), _arguments.tensor(d, name, "d"),
           _arguments.tensor(masked_m, name, "masked_m"), _arguments.int_argument(expected_m, name, "expected_m"))

    return _named(gemm, name, f"""Grouped GEMM, masked layout (MoE): the first masked_m[g] rows of d[g] are
    a[g, :masked_m[g]] @ b[g]^T.

    a [G, M_max, K] and b [G, N, K] {dtype}; d [G, M_max, N] {dtype} or float32. masked_m int32 [G] on the
    device of a (never read by the host; rows past it keep what d held); expected_m a positive hint of the
    typical masked_m. {_COMPILED_DIMS_DOC}""")


def _k_grouped(name: str) -> KGroupedGemm:
    dtype = _dtype_of(name)
    kernel, op = getattr(_C, name), OPS[name]

    def gemm(a: Tensor, b: Tensor, d: Tensor, ks: Sequence[int], ks_tensor: Tensor, c: Optional[Tensor] = None,
             compiled_dims: str = "mn") -> None:
        if runs_eagerly(d):
            kernel(a, b, d, ks, ks_tensor, c, compiled_dims)
            increment_version(d)
            return
        _arguments.check_compiled_dims(name, compiled_dims)
        op(_arguments.tensor(a, name, "a"), _arguments.tensor(b, name, "b"), _arguments.tensor(d, name, "d"),
           _arguments.int_list(ks, name, "ks"), _arguments.tensor(ks_tensor, name, "ks_tensor"),
           _arguments.optional_tensor(c, name, "c"))

    return _named(gemm, name, f"""K-grouped GEMM (the experts' weight gradient): d[g] = c[g] + a_g^T @ b_g.

    a [sum(ks), M] and b [sum(ks), N] {dtype}, expert g's rows being the ks[g] after those of the experts before
    it; d and c (optional, possibly d itself) float32 [G, M, N]. ks (a list of ints, each a multiple of 128,
    possibly 0) and ks_tensor (int32 [G] on the device of a, what the GPU kernel reads, so that the call can be
    captured in a CUDA graph) hold the same counts; an empty expert's d[g] is c[g], or zeros without c.
    {_COMPILED_DIMS_DOC}""")


bf16_gemm_nt, bf16_gemm_nn, bf16_gemm_tn, bf16_gemm_tt, fp16_gemm_nt, fp16_gemm_nn, fp16_gemm_tn, fp16_gemm_tt = (
    _dense(name) for name in DENSE)
(m_grouped_bf16_gemm_nt_contiguous, m_grouped_bf16_gemm_nn_contiguous, m_grouped_fp16_gemm_nt_contiguous,
 m_grouped_fp16_gemm_nn_contiguous) = (_contiguous(name) for name in CONTIGUOUS)
m_grouped_bf16_gemm_nt_masked, m_grouped_fp16_gemm_nt_masked = (_masked(name) for name in MASKED)
k_grouped_bf16_gemm_tn_contiguous, k_grouped_fp16_gemm_tn_contiguous = (_k_grouped(name) for name in K_GROUPED)

NAMES: List[str] = DENSE + CONTIGUOUS + MASKED + K_GROUPED
