"""The INT8 quantizers on a Hopper GPU: bit for bit against the torch reference of the same arithmetic computed on
the GPU and against the CPU backend, for every quantizer, input dtype and kernel path (a row's team from one thread
to a CTA, rows held in registers and longer ones read twice, 16-byte and element accesses), the layouts, writes
confined to the outputs, CUDA-graph capture, torch.compile, INT8 GEMMs fed with the results, and
compute-sanitizer's memcheck and racecheck."""

import math
import random

import pytest
import torch

import fgemm
from quantize_int8_reference import assert_same_codes, per_block, per_row, per_token_group
from quantize_reference import assert_same_scales, random_input
from sanitizer import assert_sanitizer_clean

pytestmark = pytest.mark.gpu

DTYPES = [torch.bfloat16, torch.float16, torch.float32]
GROUP_SIZES = [32, 64, 128]


def random_shapes(count, seed, rows_choices):
    rng = random.Random(seed)
    k_choices = [16, 48, 100, 128, 130, 512, 1000, 1536, 2048, 7000, 7168]
    return [(rng.choice(rows_choices), rng.choice(k_choices)) for _ in range(count)]


# One scale per row: a row's team of threads grows with K (K = 16: one thread; 100: four, element accesses; 1000:
# a warp; 2048 and 4096: two and four warps meeting in shared memory; 8192 and more: the CTA), then its slices per
# thread (16384: four; 32768: eight, the most held in registers); 32784 and 40000 are read twice. K = 0: scales only.
ROW_SHAPES = ([(1, 7168), (1, 16), (4096, 7168), (129, 130), (5, 0), (3, 100), (300, 1000), (200, 2048),
               (100, 4096), (64, 8192), (40, 16384), (33, 32768), (9, 32784), (5, 40000)]
              + random_shapes(6, 11, [1, 2, 7, 64, 200, 1000]))
GROUP_SHAPES = [(1, 7168), (1, 16), (4096, 7168), (129, 130), (3, 40)] + random_shapes(6, 12, [1, 7, 64, 1000])
BLOCK_SHAPES = [(7168, 2048), (1, 16), (129, 130), (256, 7168)] + random_shapes(6, 13, [1, 100, 128, 200, 1000])


def gen(seed):
    return torch.Generator().manual_seed(seed)


def on_gpu(shape, dtype, seed, special_values=True):
    return random_input(shape, dtype, gen(seed), special_values).cuda()


def assert_same(actual, expected, what):
    assert_same_codes(actual[0], expected[0], what)
    assert_same_scales(actual[1], expected[1], what)


def assert_matches_reference_and_cpu(quantize, reference, x, what):
    out = quantize(x)
    assert out[0].is_cuda and out[1].is_cuda
    assert_same(out, reference(x), f"against the reference {what}")
    cpu = quantize(x.cpu())
    assert_same((out[0].cpu(), out[1].cpu()), cpu, f"against the CPU backend {what}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,k", ROW_SHAPES)
def test_per_token_matches_reference_and_cpu(m, k, dtype):
    x = on_gpu((m, k), dtype, m * 10007 + k)
    assert_matches_reference_and_cpu(fgemm.per_token_cast_to_int8, per_row, x, f"for [{m}, {k}] {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,k", [(7168, 2048), (129, 130), (2048, 7168)])
def test_per_channel_matches_reference_and_cpu(n, k, dtype):
    w = on_gpu((n, k), dtype, n * 10007 + k + 1)
    assert_matches_reference_and_cpu(fgemm.per_channel_cast_to_int8, per_row, w, f"for [{n}, {k}] {dtype}")


@pytest.mark.parametrize("group_size", GROUP_SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,k", GROUP_SHAPES)
def test_per_token_group_matches_reference_and_cpu(m, k, dtype, group_size):
    x = on_gpu((m, k), dtype, m * 10007 + k + group_size)
    assert_matches_reference_and_cpu(lambda t: fgemm.per_token_group_cast_to_int8(t, group_size),
                                     lambda t: per_token_group(t, group_size), x,
                                     f"for [{m}, {k}] {dtype} groups of {group_size}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,k", BLOCK_SHAPES)
def test_per_block_matches_reference_and_cpu(n, k, dtype):
    w = on_gpu((n, k), dtype, n * 10007 + k + 2)
    assert_matches_reference_and_cpu(fgemm.per_block_cast_to_int8, per_block, w, f"for [{n}, {k}] {dtype}")


def test_grouped_inputs():
    x = on_gpu((3, 200, 1000), torch.bfloat16, 14)
    assert_same(fgemm.per_token_cast_to_int8(x), per_row(x), "per token")
    assert_same(fgemm.per_token_group_cast_to_int8(x, 64), per_token_group(x, 64), "per token group")
    w = on_gpu((4, 300, 7168), torch.float16, 15)
    assert_same(fgemm.per_channel_cast_to_int8(w), per_row(w), "per channel")
    assert_same(fgemm.per_block_cast_to_int8(w), per_block(w), "per block")


def test_unaligned_and_strided_inputs():
    wide = on_gpu((70, 1040), torch.bfloat16, 16)
    # A 2-byte offset and K % 16 != 0 take the element path; a row stride of 1040 the 16-byte one.
    for x in (wide[:, 1:1025], wide[:, :100], wide[:, 16:1024]):
        what = f"for a view with strides {x.stride()} and offset {x.storage_offset()}"
        assert_same(fgemm.per_token_cast_to_int8(x), per_row(x), what)
        assert_same(fgemm.per_token_group_cast_to_int8(x, 32), per_token_group(x, 32), what)
        assert_same(fgemm.per_block_cast_to_int8(x), per_block(x), what)


@pytest.mark.parametrize("shape", [(1, 7168), (4097, 7168), (5, 300), (3, 129, 2048)])
def test_mn_major_scales_equal_the_layout_of_the_row_major_ones(shape):
    x = on_gpu(shape, torch.bfloat16, 17)
    codes, scales = fgemm.per_token_group_cast_to_int8(x, mn_major_scales=True)
    row_major_codes, row_major_scales = fgemm.per_token_group_cast_to_int8(x)
    aligned = fgemm.get_mn_major_tma_aligned_tensor(row_major_scales)
    assert scales.stride() == aligned.stride()
    assert_same_codes(codes, row_major_codes)
    assert_same_scales(scales, aligned)


def test_special_values_on_the_gpu():
    x = torch.randn(6, 4096, generator=gen(18))
    x[0, 5] = float("nan")
    x[1, 4000] = float("inf")
    x[2, 7], x[2, 9] = -float("inf"), float("nan")
    x[3] = 0.0
    x[4] = -0.0
    x[5] *= 1e-11  # below the floor
    x = x.cuda()
    for quantize, reference in [(fgemm.per_token_cast_to_int8, per_row),
                                (lambda t: fgemm.per_token_group_cast_to_int8(t, 32), lambda t: per_token_group(t, 32)),
                                (fgemm.per_block_cast_to_int8, per_block)]:
        codes, scales = quantize(x)
        assert_same((codes, scales), reference(x), "with NaN, infinities, zeros and values below the floor")
        assert codes.min() >= -127
    codes, scales = fgemm.per_token_cast_to_int8(x)
    assert scales[0].isnan() and scales[1] == float("inf") and scales[2].isnan()
    assert (codes[:5] == 0).all() and (codes[5] != 0).any()


def scales_inside(quantizer, m, k):
    """(storage, window): a float32 storage for the scales of `quantizer` on [m, k] and the function that views
    them inside it (or inside any tensor of its shape), with elements of the storage around and between them."""
    if quantizer == "per_token":
        return torch.empty(2 * m + 4), lambda t: t[2 : 2 * m + 2 : 2]  # every other element
    if quantizer == "per_token_group":
        kb = math.ceil(k / 64)
        return torch.empty(kb + 1, m + 8), lambda t: t[:kb, 2 : m + 2].t()  # MN-major, with a column between
    nb, kb = math.ceil(m / 128), math.ceil(k / 128)
    return torch.empty(nb + 2, kb + 2), lambda t: t[1 : nb + 1, 1 : kb + 1]


def quantize_into(quantizer, x, codes, scales):
    """Runs the extension's `quantizer` into the given outputs; returns the reference's (codes, scales)."""
    if quantizer == "per_token":
        fgemm._C.per_token_cast_to_int8(x, codes, scales)
        return per_row(x)
    if quantizer == "per_token_group":
        fgemm._C.per_token_group_cast_to_int8(x, codes, scales, 64)
        return per_token_group(x, 64)
    fgemm._C.per_block_cast_to_int8(x, codes, scales)
    return per_block(x)


@pytest.mark.parametrize("quantizer", ["per_token", "per_token_group", "per_block"])
@pytest.mark.parametrize("k,offset", [(1008, 16), (1000, 3)])  # the 16-byte path, the element path
def test_writes_stay_inside_the_outputs(quantizer, k, offset):
    m = 300
    x = on_gpu((m, k), torch.bfloat16, 19)
    poison = 0x55
    code_storage = torch.full((m + 2, k + 32), poison, dtype=torch.int8, device="cuda")
    codes = code_storage[1 : m + 1, offset : offset + k]
    storage, window = scales_inside(quantizer, m, k)
    scale_storage = storage.fill_(float("nan")).cuda()
    expected = quantize_into(quantizer, x, codes, window(scale_storage))
    assert_same((codes, window(scale_storage)), expected, f"{quantizer}, K={k}")
    codes_outside = torch.ones_like(code_storage, dtype=torch.bool)
    codes_outside[1 : m + 1, offset : offset + k] = False
    assert (code_storage[codes_outside] == poison).all()
    scales_outside = torch.ones_like(scale_storage, dtype=torch.bool)
    window(scales_outside).fill_(False)
    assert scale_storage[scales_outside].isnan().all()


def test_capture_in_a_cuda_graph_on_the_current_stream():
    x = on_gpu((512, 7168), torch.bfloat16, 20)
    codes, scales = torch.empty(x.shape, dtype=torch.int8, device="cuda"), torch.empty(512, device="cuda")
    group_codes, group_scales = torch.empty_like(codes), torch.empty(512, 56, device="cuda")

    def quantize():
        fgemm._C.per_token_cast_to_int8(x, codes, scales)
        fgemm._C.per_token_group_cast_to_int8(x, group_codes, group_scales, 128)

    quantize()  # compiled and loaded before the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):  # captures the current (side) stream; a launch elsewhere fails the capture
        quantize()
    x.copy_(on_gpu((512, 7168), torch.bfloat16, 21))
    graph.replay()
    torch.cuda.synchronize()
    assert_same((codes, scales), per_row(x), "per token, after a graph replay with new input")
    assert_same((group_codes, group_scales), per_token_group(x), "per token group, after a graph replay")


def quantize_both(x, w):
    return (fgemm.per_token_cast_to_int8(x) + fgemm.per_token_group_cast_to_int8(x, 64, mn_major_scales=True)
            + fgemm.per_channel_cast_to_int8(w) + fgemm.per_block_cast_to_int8(w))


def test_compiled_quantizers_on_cuda_are_bit_identical_to_eager():
    torch._dynamo.reset()
    x, w = on_gpu((5, 7168), torch.bfloat16, 22), on_gpu((256, 7168), torch.bfloat16, 23)
    compiled_outputs = torch.compile(quantize_both, fullgraph=True)(x, w)
    eager_outputs = quantize_both(x, w)
    for i in range(0, len(eager_outputs), 2):  # (codes, scales) of each quantizer
        assert_same(compiled_outputs[i : i + 2], eager_outputs[i : i + 2], "compiled against eager")
        assert compiled_outputs[i + 1].stride() == eager_outputs[i + 1].stride()


@pytest.mark.parametrize("recipe", ["per token and channel", "blocks"])
def test_int8_gemm_fed_with_the_kernels_outputs(recipe):
    m, n, k = 300, 1024, 7168
    x = on_gpu((m, k), torch.bfloat16, 24, special_values=False)  # rows of magnitudes 2^-24 .. 2^12
    w = torch.randn(n, k, generator=gen(25)).bfloat16().cuda()  # one magnitude, which a block's scale suits
    if recipe == "blocks":
        a, b = fgemm.per_token_group_cast_to_int8(x, mn_major_scales=True), fgemm.per_block_cast_to_int8(w)
        reference_a, reference_b = per_token_group(x), per_block(w)
    else:
        a, b = fgemm.per_token_cast_to_int8(x), fgemm.per_channel_cast_to_int8(w)
        reference_a, reference_b = per_row(x), per_row(w)
    d = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    d_reference = torch.empty_like(d)
    fgemm.int8_gemm_nt(a, b, d)
    fgemm.int8_gemm_nt(reference_a, reference_b, d_reference)
    assert torch.equal(d, d_reference)
    x64, w64 = x.double(), w.double()
    rows = x64.abs().amax(dim=1, keepdim=True)  # each row of d relative to its own magnitude
    assert fgemm.calc_diff(d / rows, (x64 @ w64.t()) / rows) < 1e-3


# Every kernel: a row's teams of one thread, of four (element accesses), of half a warp, of two and four warps, of
# the CTA with two and eight slices, rows read twice (both access widths), K = 0; each group size and the
# MN-major scales; 128 x 128 blocks; all three input dtypes and a stack.
SANITIZED_PROGRAM = """
import torch, fgemm
cases = [((9, 16), torch.float32), ((5, 100), torch.bfloat16), ((3, 2, 400), torch.bfloat16),
         ((70, 136), torch.float16), ((130, 260), torch.float32), ((4, 2048), torch.float16),
         ((3, 4096), torch.bfloat16), ((2, 8192), torch.float32), ((2, 32768), torch.bfloat16),
         ((3, 32784), torch.bfloat16), ((2, 33000), torch.float16), ((4, 0), torch.float32)]
for shape, dtype in cases:
    x = torch.randn(*shape, device="cuda", dtype=dtype)
    fgemm.per_token_cast_to_int8(x)
    fgemm.per_channel_cast_to_int8(x)
    for group_size in (32, 64, 128):
        fgemm.per_token_group_cast_to_int8(x, group_size)
    fgemm.per_token_group_cast_to_int8(x, mn_major_scales=True)
    fgemm.per_block_cast_to_int8(x)
    torch.cuda.synchronize()
"""


@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
def test_compute_sanitizer_is_clean(tool, tmp_path):
    assert_sanitizer_clean(SANITIZED_PROGRAM, tmp_path, tool=tool)
