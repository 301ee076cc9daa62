"""Programmatic dependent launch (fgemm.set_pdl) on the GPU: the same bits with it on and off for each kind and
layout; chains of GEMMs each reading the previous one's output (through C, or as A, with a torch kernel between
links, or quantized on the GPU by fgemm's quantizers), eager and replayed from a CUDA graph, against FP64
references; and compute-sanitizer's memcheck and racecheck on such chains."""

import contextlib

import pytest
import torch

import fgemm
from gpu_reference import MAX_DIFF, dequantize_blocks, dequantize_rows, random_operands, reference_gemm
from sanitizer import assert_sanitizer_clean
from test_gpu_grouped import activations, grouped_weights

pytestmark = pytest.mark.gpu


@contextlib.contextmanager
def pdl(enabled):
    fgemm.set_pdl(enabled)
    try:
        yield
    finally:
        fgemm.set_pdl(False)


def poisoned(*shape, dtype):
    return torch.full(shape, float("nan"), dtype=dtype, device="cuda")


def fp8_chain(a, weights, c0):
    """D_i = A B_i^T + D_(i-1) in FP32, D_0 = c0: each GEMM reads the previous one's output as its C."""
    outputs = [c0]
    for b in weights:
        d = poisoned(*c0.shape, dtype=torch.float32)
        fgemm.fp8_gemm_nt(a, b, d, c=outputs[-1])
        outputs.append(d)
    return outputs[1:]


def bf16_chain(x, weights):
    """x_i = (x_(i-1) W_i^T) / 8 in BF16: each GEMM reads the previous output as its A, a torch kernel between."""
    outputs = [x]
    for w in weights:
        d = poisoned(x.shape[0], w.shape[0], dtype=torch.bfloat16)
        fgemm.bf16_gemm_nt(outputs[-1], w, d)
        d.mul_(0.125)
        outputs.append(d)
    return outputs[1:]


def fp8_chain_inputs(m, n, k, links, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a, first = random_operands(m, n, k, generator=gen)
    weights = [first] + [random_operands(1, n, k, generator=gen)[1] for _ in range(links - 1)]
    return a, weights, torch.randn(m, n, device="cuda", generator=gen)


def check_fp8_chain(outputs, a, weights, c0):
    expected = c0.double()
    for b, d in zip(weights, outputs):
        expected = reference_gemm(*a, *b, expected)
        assert fgemm.calc_diff(d.double(), expected) < MAX_DIFF


@pytest.mark.parametrize("m,n,k", [(1, 2112, 7168), (64, 4096, 7168), (300, 1000, 784), (4096, 2048, 512)])
def test_fp8_chain_is_correct_and_the_same_bits_with_and_without_pdl(m, n, k):
    a, weights, c0 = fp8_chain_inputs(m, n, k, 4, seed=m)
    off = fp8_chain(a, weights, c0)
    with pdl(True):
        on = fp8_chain(a, weights, c0)
    check_fp8_chain(on, a, weights, c0)
    for x, y in zip(off, on):
        assert torch.equal(x, y)


@pytest.mark.parametrize("m,k", [(1, 4096), (128, 2048), (333, 1000)])
def test_bf16_chain_through_a_and_torch_kernels_is_the_same_bits_with_and_without_pdl(m, k):
    gen = torch.Generator(device="cuda").manual_seed(k)
    x = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
    weights = [torch.randn(k, k, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(4)]
    off = bf16_chain(x, weights)
    with pdl(True):
        on = bf16_chain(x, weights)
    expected = x.double()
    for w, d_off, d_on in zip(weights, off, on):
        expected = (expected @ w.double().T) * 0.125
        assert fgemm.calc_diff(d_on.double(), expected) < MAX_DIFF
        assert torch.equal(d_off, d_on)
        expected = d_on.double()  # the next link reads the rounded output


def test_masked_layout_is_the_same_bits_with_and_without_pdl():
    groups, m_max, n, k = 6, 96, 512, 1024
    a, sfa = activations(groups, m_max, k)
    b, sfb = grouped_weights(groups, n, k)
    masked_m = torch.tensor([0, 1, 96, 40, 95, 7], dtype=torch.int32, device="cuda")
    results = []
    for enabled in (False, True):
        d = poisoned(groups, m_max, n, dtype=torch.bfloat16)
        with pdl(enabled):
            fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa), (b, sfb), d, masked_m, 48)
        results.append(d)
    for g, rows in enumerate(masked_m.tolist()):
        assert torch.equal(results[0][g, :rows], results[1][g, :rows])
        assert results[1][g, rows:].isnan().all()


def assert_captured_with_pdl_replays_eager_bits(chain):
    """chain() runs a chain of kernels and returns its outputs: captured in a CUDA graph with PDL on, 20 replays
    into NaN-poisoned outputs give the bits of an eager run without PDL."""
    eager = chain()
    with pdl(True):
        chain()  # compiles the kernels outside the capture
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = chain()
    for _ in range(20):
        for d in captured:
            d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        for x, y in zip(eager, captured):
            assert torch.equal(x, y)


def test_a_chain_captured_with_pdl_replays_to_the_same_bits():
    a, weights, c0 = fp8_chain_inputs(128, 7168, 2048, 6, seed=11)
    assert_captured_with_pdl_replays_eager_bits(lambda: fp8_chain(a, weights, c0))


def quantize_link(x, link):
    """Link `link` of a quantized chain quantizes its input on the GPU: FP8 per token, INT8 per token, or the
    row-wise codes of an FP8 cast-transpose, in turn."""
    if link % 3 == 0:
        return fgemm.per_token_cast_to_fp8(x)
    if link % 3 == 1:
        return fgemm.per_token_cast_to_int8(x)
    codes, scales, _, _ = fgemm.cast_transpose_to_fp8(x)
    return codes, scales


def quantized_chain(x, weights):
    """x_i = quantized(x_(i-1)) W_i^T in BF16: each quantizer reads the previous GEMM's output, and each GEMM the
    quantizer's. weights[i] is FP8 per 128 x 128 block or INT8 per channel, as link i's quantizer asks."""
    outputs = [x]
    for link, w in enumerate(weights):
        a = quantize_link(outputs[-1], link)
        d = poisoned(*x.shape, dtype=torch.bfloat16)
        (fgemm.int8_gemm_nt if link % 3 == 1 else fgemm.fp8_gemm_nt)(a, w, d)
        outputs.append(d)
    return outputs[1:]


def quantized_chain_inputs(m, k, links, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
    weights = []
    for link in range(links):
        w = torch.randn(k, k, device="cuda", generator=gen) / k**0.5
        weights.append(fgemm.per_channel_cast_to_int8(w) if link % 3 == 1 else fgemm.per_block_cast_to_fp8(w))
    return x, weights


def check_quantized_chain(outputs, x, weights):
    """Each link against FP64 from its operands, quantized again (without PDL) from the previous link's output."""
    inputs = [x] + outputs[:-1]
    for link, (w, x_in, d) in enumerate(zip(weights, inputs, outputs)):
        a, sa = quantize_link(x_in, link)
        if link % 3 == 1:
            expected = (a.double() * sa.double().reshape(-1, 1)) @ (w[0].double() * w[1].double().reshape(-1, 1)).T
        else:
            expected = dequantize_rows(a, sa) @ dequantize_blocks(*w).T
        assert fgemm.calc_diff(d.double(), expected) < MAX_DIFF


@pytest.mark.parametrize("m,k", [(1, 512), (77, 1024), (512, 2048)])
def test_quantizers_between_gemms_are_the_same_bits_with_and_without_pdl(m, k):
    x, weights = quantized_chain_inputs(m, k, 6, seed=m)
    off = quantized_chain(x, weights)
    with pdl(True):
        on = quantized_chain(x, weights)
    check_quantized_chain(on, x, weights)
    for d_off, d_on in zip(off, on):
        assert torch.equal(d_off, d_on)


def test_a_quantized_chain_captured_with_pdl_replays_to_the_same_bits():
    x, weights = quantized_chain_inputs(64, 1024, 6, seed=5)
    assert_captured_with_pdl_replays_eager_bits(lambda: quantized_chain(x, weights))


SANITIZED_PROGRAM = """
import torch
import fgemm
from test_gpu_pdl import bf16_chain, check_fp8_chain, fp8_chain, fp8_chain_inputs, quantized_chain
from test_gpu_pdl import quantized_chain_inputs
fgemm.set_pdl(True)
a, weights, c0 = fp8_chain_inputs(70, 264, 400, 3, seed=1)
check_fp8_chain(fp8_chain(a, weights, c0), a, weights, c0)
x = torch.randn(33, 256, device="cuda").to(torch.bfloat16)
bf16_chain(x, [torch.randn(256, 256, device="cuda").to(torch.bfloat16) for _ in range(3)])
quantized_chain(*quantized_chain_inputs(40, 384, 3, seed=2))
torch.cuda.synchronize()
"""


@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
def test_sanitizer(tmp_path, tool):
    assert_sanitizer_clean(SANITIZED_PROGRAM, tmp_path, tool)
