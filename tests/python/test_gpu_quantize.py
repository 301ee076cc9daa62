"""The quantizers and the scale-layout copy on a Hopper GPU: bit for bit against the torch reference of the
same arithmetic computed on the GPU and against the CPU backend, DeepGEMM's own reference, the layouts, writes
confined to the outputs, CUDA-graph capture, and GEMMs fed with the results."""

import random

import pytest
import torch

import fgemm
from quantize_reference import (
    assert_same_codes,
    assert_same_scales,
    deepgemm_per_token,
    per_block,
    per_token,
    random_input,
)
from sanitizer import assert_sanitizer_clean

pytestmark = pytest.mark.gpu

DTYPES = [torch.bfloat16, torch.float32]


def random_shapes(count, seed, rows_choices):
    rng = random.Random(seed)
    k_choices = [16, 48, 100, 128, 130, 512, 1000, 1536, 2048, 7000, 7168]
    return [(rng.choice(rows_choices), rng.choice(k_choices)) for _ in range(count)]


TOKEN_SHAPES = [(1, 7168), (1, 16), (4096, 7168), (129, 130)] + random_shapes(8, 11, [1, 2, 7, 64, 200, 1000])
BLOCK_SHAPES = [(7168, 2048), (1, 16), (129, 130), (256, 7168)] + random_shapes(8, 12, [1, 100, 128, 200, 1000])


def on_gpu(shape, dtype, seed, special_values=True):
    return random_input(shape, dtype, torch.Generator().manual_seed(seed), special_values).cuda()


def assert_same(actual, expected, what):
    assert_same_codes(actual[0], expected[0], what)
    assert_same_scales(actual[1], expected[1], what)


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,k", TOKEN_SHAPES)
def test_per_token_matches_reference_and_cpu(m, k, dtype, use_ue8m0):
    x = on_gpu((m, k), dtype, m * 10007 + k)
    out = fgemm.per_token_cast_to_fp8(x, use_ue8m0=use_ue8m0)
    assert out[0].is_cuda and out[1].is_cuda
    assert_same(out, per_token(x, use_ue8m0), f"against the reference for [{m}, {k}] {dtype}")
    cpu = fgemm.per_token_cast_to_fp8(x.cpu(), use_ue8m0=use_ue8m0)
    assert_same((out[0].cpu(), out[1].cpu()), cpu, f"against the CPU backend for [{m}, {k}] {dtype}")


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,k", BLOCK_SHAPES)
def test_per_block_matches_reference_and_cpu(n, k, dtype, use_ue8m0):
    w = on_gpu((n, k), dtype, n * 10007 + k + 1)
    out = fgemm.per_block_cast_to_fp8(w, use_ue8m0=use_ue8m0)
    assert_same(out, per_block(w, use_ue8m0), f"against the reference for [{n}, {k}] {dtype}")
    cpu = fgemm.per_block_cast_to_fp8(w.cpu(), use_ue8m0=use_ue8m0)
    assert_same((out[0].cpu(), out[1].cpu()), cpu, f"against the CPU backend for [{n}, {k}] {dtype}")


@pytest.mark.parametrize("m,k", [(1, 7168), (4096, 2048), (300, 1000)])
def test_per_token_matches_deepgemm_reference(m, k):
    x = on_gpu((m, k), torch.bfloat16, m + k)
    assert_same(fgemm.per_token_cast_to_fp8(x), deepgemm_per_token(x), f"for [{m}, {k}]")


@pytest.mark.parametrize("use_ue8m0", [False, True])
def test_grouped_inputs(use_ue8m0):
    x = on_gpu((3, 200, 1000), torch.bfloat16, 13)
    assert_same(fgemm.per_token_cast_to_fp8(x, use_ue8m0=use_ue8m0), per_token(x, use_ue8m0), "per token")
    w = on_gpu((4, 300, 7168), torch.float32, 14)
    assert_same(fgemm.per_block_cast_to_fp8(w, use_ue8m0=use_ue8m0), per_block(w, use_ue8m0), "per block")


def test_unaligned_and_strided_inputs():
    wide = on_gpu((70, 1040), torch.bfloat16, 15)
    # A 2-byte offset and K % 16 != 0 take the element path; a row stride of 1040 the 16-byte one.
    for x in (wide[:, 1:1025], wide[:, :100], wide[:, 16:1024]):
        assert_same(fgemm.per_token_cast_to_fp8(x), per_token(x), f"for a view with strides {x.stride()}")
        assert_same(fgemm.per_block_cast_to_fp8(x), per_block(x), f"for a view with strides {x.stride()}")


@pytest.mark.parametrize("shape", [(1, 7168), (4097, 7168), (5, 300), (3, 129, 2048)])
def test_mn_major_scales_equal_the_layout_of_the_row_major_ones(shape):
    x = on_gpu(shape, torch.bfloat16, 16)
    codes, scales = fgemm.per_token_cast_to_fp8(x, mn_major_scales=True)
    row_major_codes, row_major_scales = fgemm.per_token_cast_to_fp8(x)
    aligned = fgemm.get_mn_major_tma_aligned_tensor(row_major_scales)
    assert scales.stride() == aligned.stride()
    assert_same_codes(codes, row_major_codes)
    assert_same_scales(scales, aligned)


@pytest.mark.parametrize("shape", [(1, 1), (33, 56), (4096, 56), (32768, 16), (8, 1000, 7), (2, 5, 100)])
def test_get_mn_major_tma_aligned_tensor_kernel(shape):
    sf = torch.randn(shape, device="cuda")
    aligned = fgemm.get_mn_major_tma_aligned_tensor(sf)
    m, kb = shape[-2:]
    aligned_m = fgemm.get_tma_aligned_size(m, 4)
    assert aligned.stride() == ((1, aligned_m) if len(shape) == 2 else (aligned_m * kb, 1, aligned_m))
    assert torch.equal(aligned, sf)
    assert fgemm.get_mn_major_tma_aligned_tensor(aligned) is aligned


def test_ue8m0_scales_are_powers_of_two():
    x = on_gpu((1000, 7168), torch.bfloat16, 17, special_values=False)
    _, plain = fgemm.per_token_cast_to_fp8(x)
    _, powers = fgemm.per_token_cast_to_fp8(x, use_ue8m0=True)
    mantissas, _ = torch.frexp(powers)
    assert (mantissas == 0.5).all()
    assert (powers >= plain).all() and (powers / 2 < plain).all()


@pytest.mark.parametrize("k,offset", [(1008, 16), (1000, 3)])  # the 16-byte path, the element path
def test_writes_stay_inside_the_outputs(k, offset):
    m = 300
    x = on_gpu((m, k), torch.bfloat16, 18)
    poison = 0x55
    code_storage = torch.full((m + 2, k + 32), poison, dtype=torch.uint8, device="cuda")
    codes = code_storage.view(torch.float8_e4m3fn)[1 : m + 1, offset : offset + k]
    kb = -(-k // 128)
    scale_storage = torch.full((kb + 1, m + 8), float("nan"), device="cuda")
    scales = scale_storage[:kb, 2 : m + 2].t()  # MN-major, with a column between
    fgemm._C.per_token_cast_to_fp8(x, codes, scales, False)
    assert_same((codes, scales), per_token(x), f"K={k}")
    codes_outside = torch.ones_like(code_storage, dtype=torch.bool)
    codes_outside[1 : m + 1, offset : offset + k] = False
    assert (code_storage[codes_outside] == poison).all()
    scales_outside = torch.ones_like(scale_storage, dtype=torch.bool)
    scales_outside[:kb, 2 : m + 2] = False
    assert scale_storage[scales_outside].isnan().all()


def test_capture_in_a_cuda_graph_on_the_current_stream():
    x = on_gpu((512, 7168), torch.bfloat16, 19)
    codes = torch.empty(x.shape, dtype=torch.float8_e4m3fn, device="cuda")
    scales = torch.empty(512, 56, device="cuda")
    fgemm._C.per_token_cast_to_fp8(x, codes, scales, False)  # compiled and loaded before the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):  # captures the current (side) stream; a launch elsewhere fails the capture
        fgemm._C.per_token_cast_to_fp8(x, codes, scales, False)
    x.copy_(on_gpu((512, 7168), torch.bfloat16, 20))
    graph.replay()
    torch.cuda.synchronize()
    assert_same((codes, scales), per_token(x), "after a graph replay with new input")


@pytest.mark.parametrize("use_ue8m0", [False, True])
def test_gemm_fed_with_the_kernels_outputs(use_ue8m0):
    m, n, k = 300, 1024, 7168
    x = on_gpu((m, k), torch.bfloat16, 21, special_values=False)
    w = on_gpu((n, k), torch.bfloat16, 22, special_values=False)
    a, sfa = fgemm.per_token_cast_to_fp8(x, use_ue8m0=use_ue8m0, mn_major_scales=True)
    b, sfb = fgemm.per_block_cast_to_fp8(w, use_ue8m0=use_ue8m0)
    ref_a, ref_sfa = per_token(x, use_ue8m0)
    ref_b, ref_sfb = per_block(w, use_ue8m0)
    d = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    d_ref = torch.empty_like(d)
    fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
    fgemm.fp8_gemm_nt((ref_a.contiguous(), ref_sfa), (ref_b.contiguous(), ref_sfb), d_ref)
    assert torch.equal(d, d_ref)
    # The quantization error of the whole product stays within DeepGEMM's bound.
    assert fgemm.calc_diff(d, x.double() @ w.double().t()) < 1e-3


# Both vector widths (K a multiple of 16, and not), both input types, groups, both scale layouts, and the scales'
# copy into the MN-major layout, whose 32 x 32 tiles pass through shared memory.
SANITIZED_PROGRAM = """
import torch, fgemm
for shape, dtype in [((3, 200, 400), torch.bfloat16), ((130, 260), torch.float32), ((70, 136), torch.bfloat16)]:
    x = torch.randn(*shape, device="cuda", dtype=dtype)
    codes, sf = fgemm.per_token_cast_to_fp8(x)
    codes, sf_mn = fgemm.per_token_cast_to_fp8(x, mn_major_scales=True)
    assert torch.equal(fgemm.get_mn_major_tma_aligned_tensor(sf), sf_mn)
    w_codes, w_sf = fgemm.per_block_cast_to_fp8(x)
    torch.cuda.synchronize()
"""


@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
def test_compute_sanitizer_is_clean(tool, tmp_path):
    assert_sanitizer_clean(SANITIZED_PROGRAM, tmp_path, tool=tool)
