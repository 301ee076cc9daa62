"""torch.ops.fgemm's BF16 and FP16 GEMMs: schemas and fake versions (opcheck), shape-only calls on FakeTensor and
meta tensors for every function, the version counter of d, and torch.compile(fullgraph=True) on CPU tensors."""

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import fgemm
from fgemm.gemm_16bit import NAMES
from operands_16bit import DTYPES, dense_operands, matrix

M, N, K, G = 5, 24, 72, 2


def gen():
    return torch.Generator().manual_seed(0)


def call_and_operands(name):
    """(call, tensors) for the function `name`: call(*tensors) runs it, d being tensors[2]."""
    dtype = DTYPES["bf16" if "bf16" in name else "fp16"]
    g = gen()
    if name.startswith("m_grouped") and name.endswith("contiguous"):
        letters = name.split("_gemm_")[1][:2]
        a = matrix(M, K, dtype, g)
        b = matrix(*((N, K) if letters == "nt" else (K, N)), dtype, g, lead=(G,))
        layout = torch.tensor([0, 1, -1, 1, 0], dtype=torch.int32)
        return lambda *t: getattr(fgemm, name)(*t), (a, b, torch.zeros(M, N), layout)
    if name.endswith("masked"):
        a, b = matrix(M, K, dtype, g, lead=(G,)), matrix(N, K, dtype, g, lead=(G,))
        masked_m = torch.tensor([3, 5], dtype=torch.int32)
        return lambda *t: getattr(fgemm, name)(*t, 4), (a, b, torch.zeros(G, M, N), masked_m)
    if name.startswith("k_grouped"):
        ks = [128, 0]
        a, b = matrix(128, 8, dtype, g), matrix(128, N, dtype, g)
        return lambda *t: getattr(fgemm, name)(t[0], t[1], t[2], ks, t[3]), (
            a, b, torch.zeros(G, 8, N), torch.tensor(ks, dtype=torch.int32))
    a, b = dense_operands(name[-2:], M, N, K, dtype, g)
    return lambda *t: getattr(fgemm, name)(*t), (a, b, torch.zeros(M, N))


# ---- opcheck --------------------------------------------------------------------------------------------

def test_opcheck_16bit_gemms():
    ops = torch.ops.fgemm
    g = gen()
    a, b = dense_operands("nt", M, N, K, torch.bfloat16, g)
    torch.library.opcheck(ops.bf16_gemm_nt, (a, b, torch.zeros(M, N, dtype=torch.bfloat16), None))
    # A C of D's type (DeepGEMM's c = d, here apart from d).
    c = torch.randn(M, N, generator=g).to(torch.bfloat16)
    torch.library.opcheck(ops.bf16_gemm_nt, (a, b, torch.zeros(M, N, dtype=torch.bfloat16), c))
    # opcheck also runs the op on contiguous copies of the inputs: an M whose [K, M] rows are 16 bytes wide.
    a, b = dense_operands("tn", 8, N, K, torch.float16, g)
    torch.library.opcheck(ops.fp16_gemm_tn, (a, b, torch.zeros(8, N), torch.randn(8, N, generator=g)))
    a, b = matrix(M, K, torch.bfloat16, g), matrix(K, N, torch.bfloat16, g, lead=(G,))
    torch.library.opcheck(ops.m_grouped_bf16_gemm_nn_contiguous,
                          (a, b, torch.zeros(M, N), torch.tensor([2, 3], dtype=torch.int32), True))
    a, b = matrix(M, K, torch.float16, g, lead=(G,)), matrix(N, K, torch.float16, g, lead=(G,))
    torch.library.opcheck(ops.m_grouped_fp16_gemm_nt_masked,
                          (a, b, torch.zeros(G, M, N), torch.tensor([3, 5], dtype=torch.int32), 4))
    a, b = matrix(256, 8, torch.bfloat16, g), matrix(256, N, torch.bfloat16, g)
    torch.library.opcheck(ops.k_grouped_bf16_gemm_tn_contiguous,
                          (a, b, torch.zeros(3, 8, N), [128, 0, 128], torch.tensor([128, 0, 128]).int(), None))


# ---- FakeTensor and meta --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_each_16bit_gemm_runs_shape_only_on_fake_and_meta_tensors(name):
    call, tensors = call_and_operands(name)
    call(*(t.to("meta") for t in tensors))
    with FakeTensorMode() as mode:
        call(*(mode.from_tensor(t) for t in tensors))
    assert (tensors[2] == 0).all()  # the real d was never written


def test_a_meta_tensor_among_real_ones_is_refused():
    call, (a, b, d) = call_and_operands("bf16_gemm_nn")
    with pytest.raises(ValueError, match="argument 'a' is on device 'meta'"):
        call(a.to("meta"), b.to("meta"), d)  # d real: the fake version's device check


# ---- the version counter of d and the dispatcher --------------------------------------------------------

@pytest.mark.parametrize("name", ["bf16_gemm_tt", "m_grouped_fp16_gemm_nn_contiguous", "m_grouped_bf16_gemm_nt_masked",
                                  "k_grouped_fp16_gemm_tn_contiguous"])
def test_each_kind_bumps_the_version_of_d_and_is_seen_by_dispatch_modes(name):
    call, tensors = call_and_operands(name)
    call(*tensors)
    assert tensors[2]._version == 1
    direct = tensors[2].clone()

    class RecordOps(torch.utils._python_dispatch.TorchDispatchMode):
        ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    with RecordOps() as mode:
        call(*tensors)
    assert f"fgemm.{name}.default" in mode.ops
    assert torch.equal(tensors[2], direct)  # the op computed what the direct call does


# ---- torch.compile --------------------------------------------------------------------------------------

def project_and_accumulate(x, w, grad_out, grad_w):
    """A 16-bit layer's forward (y = x @ w^T, BF16 out) and its weight gradient accumulated in FP32 (k-grouped,
    one expert) into grad_w, in one graph."""
    y = torch.empty(x.shape[0], w.shape[0], dtype=torch.bfloat16)
    fgemm.bf16_gemm_nt(x, w, y)
    fgemm.k_grouped_bf16_gemm_tn_contiguous(grad_out, x, grad_w, [x.shape[0]], torch.tensor([x.shape[0]]).int(),
                                            c=grad_w)
    return y


def test_compiled_16bit_gemms_are_bit_identical_to_eager():
    torch._dynamo.reset()
    g = gen()
    x, w = matrix(128, K, torch.bfloat16, g), matrix(N, K, torch.bfloat16, g)
    grad_out = matrix(128, 16, torch.bfloat16, g)
    grad_w_eager, grad_w_compiled = torch.ones(1, 16, K), torch.ones(1, 16, K)
    compiled = torch.compile(project_and_accumulate, fullgraph=True)
    assert torch.equal(compiled(x, w, grad_out, grad_w_compiled), project_and_accumulate(x, w, grad_out, grad_w_eager))
    assert torch.equal(grad_w_compiled, grad_w_eager)
    assert not torch.equal(grad_w_eager, torch.ones(1, 16, K))
