"""torch.ops.fgemm on CUDA tensors: opcheck, FakeTensor shapes, the version counter of d, torch.compile
(fullgraph) bit-identical to eager, and the masked GEMM captured in a CUDA graph with a compiled function."""

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import fgemm
from test_torch_ops import (WITHOUT_SCHEMA, contiguous_operands, masked_operands, normal_operands,
                            quantize_and_multiply)

pytestmark = pytest.mark.gpu
M, N, K = 5, 256, 384


def cuda(tensors):
    return [t.cuda() for t in tensors]


def test_opcheck_on_cuda():
    ops = torch.ops.fgemm
    torch.library.opcheck(ops.fp8_gemm_nt, (*cuda(normal_operands()), None), test_utils=WITHOUT_SCHEMA)
    torch.library.opcheck(ops.m_grouped_fp8_gemm_nt_contiguous, cuda(contiguous_operands()),
                          test_utils=WITHOUT_SCHEMA)
    torch.library.opcheck(ops.m_grouped_fp8_gemm_nt_masked, (*cuda(masked_operands()), 4), test_utils=WITHOUT_SCHEMA)
    x = torch.randn(M, K, device="cuda")
    torch.library.opcheck(ops.per_token_cast_to_fp8, (x, False, True))
    torch.library.opcheck(ops.per_block_cast_to_fp8, (x, False))
    torch.library.opcheck(ops.to_mn_major_tma_aligned, (torch.rand(M, 3, device="cuda"),))


def test_fake_cuda_tensors_give_the_eager_shapes():
    x = torch.randn(M, K, device="cuda")
    eager = fgemm.per_token_cast_to_fp8(x, mn_major_scales=True)
    with FakeTensorMode() as mode:
        fake = fgemm.per_token_cast_to_fp8(mode.from_tensor(x), mn_major_scales=True)
    assert [(t.shape, t.stride(), t.device) for t in fake] == [(t.shape, t.stride(), t.device) for t in eager]


def test_version_of_d_on_cuda():
    a, sfa, b, sfb, d = cuda(normal_operands())
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
    assert d._version == 1


def test_compiled_quantize_and_gemm_on_cuda_is_bit_identical_to_eager():
    torch._dynamo.reset()
    x, w = torch.randn(M, K, device="cuda"), torch.randn(N, K, device="cuda")
    compiled = torch.compile(quantize_and_multiply, fullgraph=True)
    assert torch.equal(compiled(x, w), quantize_and_multiply(x, w))


def test_compiled_masked_gemm_replays_in_a_cuda_graph():
    torch._dynamo.reset()
    a, sfa, b, sfb, d, masked_m = cuda(masked_operands())
    sfa = fgemm.get_mn_major_tma_aligned_tensor(sfa)

    @torch.compile(fullgraph=True)
    def masked(a, sfa, b, sfb, d, masked_m):
        fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa), (b, sfb), d, masked_m, 4)

    expected = torch.zeros_like(d)
    fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa), (b, sfb), expected, masked_m, 4)
    masked(a, sfa, b, sfb, d, masked_m)  # compiles the function and the kernel outside the capture
    torch.cuda.synchronize()
    d.zero_()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        masked(a, sfa, b, sfb, d, masked_m)
    masked_m.copy_(torch.tensor([2, 4], dtype=torch.int32))  # the graph reads masked_m on the device at replay
    expected.zero_()
    fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa), (b, sfb), expected, masked_m, 4)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(d, expected)
