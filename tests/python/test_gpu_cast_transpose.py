"""The cast-transpose quantizers on a Hopper GPU: bit for bit against the torch reference computed on the GPU and
against the CPU backend, both access widths of x and of the transposed codes, the grouped layout over several
launches, writes confined to the outputs, CUDA-graph capture, and compute-sanitizer's memcheck and racecheck."""

import math
import random

import pytest
import torch

import fgemm
from quantize_reference import (
    assert_same_codes,
    assert_same_scales,
    cast_transpose,
    grouped_cast_transpose,
    padded_to_blocks,
    random_input,
)
from sanitizer import assert_sanitizer_clean

pytestmark = pytest.mark.gpu

DTYPES = [torch.bfloat16, torch.float32]


def random_shapes(count, seed):
    rng = random.Random(seed)
    sizes = [1, 2, 7, 16, 48, 100, 128, 130, 200, 1000, 2048, 7168]
    return [(rng.choice(sizes), rng.choice(sizes)) for _ in range(count)]


# M and K multiples of 16 take the 16-byte paths, the others the element paths (x's and the transpose's apart).
SHAPES = [(1, 1), (1, 7168), (7168, 1), (4096, 7168), (129, 130), (256, 100), (100, 256), (2048, 2048)]
SHAPES += random_shapes(8, seed=41)


def on_gpu(shape, dtype, seed, special_values=True):
    return random_input(shape, dtype, torch.Generator().manual_seed(seed), special_values).cuda()


def assert_same(actual, expected, what=""):
    for i, (a, e) in enumerate(zip(actual, expected)):
        check = assert_same_codes if i % 2 == 0 else assert_same_scales
        check(a.cpu(), e.cpu(), f"(output {i}) {what}")


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,k", SHAPES)
def test_matches_reference_and_cpu(m, k, dtype, use_ue8m0):
    x = on_gpu((m, k), dtype, m * 10007 + k)
    out = fgemm.cast_transpose_to_fp8(x, use_ue8m0=use_ue8m0)
    assert all(t.is_cuda for t in out)
    assert_same(out, cast_transpose(x, use_ue8m0), f"against the reference for [{m}, {k}] {dtype}")
    cpu = fgemm.cast_transpose_to_fp8(x.cpu(), use_ue8m0=use_ue8m0)
    assert_same(out, cpu, f"against the CPU backend for [{m}, {k}] {dtype}")
    assert_same(out, fgemm.per_token_cast_to_fp8(x, use_ue8m0, mn_major_scales=True)
                + fgemm.per_token_cast_to_fp8(x.t(), use_ue8m0, mn_major_scales=True), "against per_token")


@pytest.mark.parametrize("mn_major_scales", [False, True])
def test_scale_layouts(mn_major_scales):
    m, k = 4097, 7168
    x = on_gpu((m, k), torch.bfloat16, 42)
    out = fgemm.cast_transpose_to_fp8(x, mn_major_scales=mn_major_scales)
    assert_same(out, cast_transpose(x))
    if mn_major_scales:
        assert out[1].stride() == (1, fgemm.get_tma_aligned_size(m, 4))
        assert out[3].stride() == (1, fgemm.get_tma_aligned_size(k, 4))


def test_unaligned_and_strided_inputs():
    wide = on_gpu((272, 1040), torch.bfloat16, 43)
    # A 2-byte offset and K % 16 != 0 take x's element path; a row stride of 1040 the 16-byte one.
    for x in (wide[:, 1:1025], wide[:, :100], wide[:, 16:1024], wide[:200, 16:1024]):
        assert_same(fgemm.cast_transpose_to_fp8(x), cast_transpose(x), f"for a view with strides {x.stride()}")


GROUPED = [([128], 7168), ([0, 128, 0, 256, 128], 2048), ([256, 0], 1), ([0, 0], 128), ([384, 128], 130),
           ([128 * (g % 3) for g in range(70)], 256)]  # 70 experts, every third empty: three launches


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ks,h", GROUPED)
def test_grouped_matches_reference_and_cpu(ks, h, dtype, use_ue8m0):
    x = on_gpu((sum(ks), h), dtype, sum(ks) + h + len(ks))
    out = fgemm.grouped_cast_transpose_to_fp8(x, ks, use_ue8m0=use_ue8m0)
    assert_same(out, grouped_cast_transpose(x, ks, use_ue8m0), f"for ks={ks[:8]}.. H={h} {dtype}")
    cpu = fgemm.grouped_cast_transpose_to_fp8(x.cpu(), ks, use_ue8m0=use_ue8m0)
    assert_same(out, cpu, f"against the CPU backend for ks={ks[:8]}.. H={h} {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ks,h", [([100, 0, 1, 300], 7168), ([127], 64), ([129, 128], 2048), ([0, 5], 300),
                                  ([1000 * (g % 3) + g for g in range(40)], 256)])  # two launches
def test_grouped_pads_each_expert_to_whole_blocks_as_the_cpu(ks, h, dtype):
    x = on_gpu((sum(ks), h), dtype, sum(ks) + h)
    out = fgemm.grouped_cast_transpose_to_fp8(x, ks)
    padded, padded_counts = padded_to_blocks(x, ks)
    assert_same(out, grouped_cast_transpose(padded, padded_counts), f"for ks={ks[:8]}.. H={h} {dtype}")
    assert_same(out, fgemm.grouped_cast_transpose_to_fp8(x.cpu(), ks), f"against the CPU for ks={ks[:8]}..")


def test_grouped_padding_writes_only_the_padded_outputs():
    ks, h = [100, 0, 300], 200
    x = on_gpu((sum(ks), h), torch.bfloat16, 47)
    rows = 128 + 384
    storage = torch.full((rows * h + 64,), 0x55, dtype=torch.uint8, device="cuda")
    flat = storage[16 : 16 + rows * h].view(torch.float8_e4m3fn)
    codes = torch.empty(rows, h, dtype=torch.float8_e4m3fn, device="cuda")
    sf, sft = torch.empty(rows, 2, device="cuda"), torch.empty(h, rows // 128, device="cuda")
    fgemm._C.grouped_cast_transpose_to_fp8(x, ks, codes, sf, flat, sft, False)
    assert_same((codes, sf, flat, sft), grouped_cast_transpose(*padded_to_blocks(x, ks)))
    assert (storage[:16] == 0x55).all() and (storage[16 + rows * h :] == 0x55).all()


@pytest.mark.parametrize("m,k,offset", [(304, 1008, 16), (300, 1000, 3)])  # 16-byte paths, element paths
def test_writes_stay_inside_the_outputs(m, k, offset):
    x = on_gpu((m, k), torch.bfloat16, 44)
    poison = 0x55
    code_storage = torch.full((m + 2, k + 32), poison, dtype=torch.uint8, device="cuda")
    codes = code_storage.view(torch.float8_e4m3fn)[1 : m + 1, offset : offset + k]
    transposed_storage = torch.full((k + 2, m + 48), poison, dtype=torch.uint8, device="cuda")
    transposed = transposed_storage.view(torch.float8_e4m3fn)[1 : k + 1, offset : offset + m]
    kb, mb = math.ceil(k / 128), math.ceil(m / 128)
    sf_storage = torch.full((kb + 1, m + 8), float("nan"), device="cuda")
    sf = sf_storage[:kb, 2 : m + 2].t()  # MN-major, with a column between
    sft_storage = torch.full((k + 3, mb + 2), float("nan"), device="cuda")
    sft = sft_storage[1 : k + 1, 1 : mb + 1]  # row-major, with padding around
    fgemm._C.cast_transpose_to_fp8(x, codes, sf, transposed, sft, False)
    assert_same((codes, sf, transposed, sft), cast_transpose(x), f"K={k}")
    for storage, rows, cols in ((code_storage, slice(1, m + 1), slice(offset, offset + k)),
                                (transposed_storage, slice(1, k + 1), slice(offset, offset + m)),
                                (sf_storage, slice(0, kb), slice(2, m + 2)),
                                (sft_storage, slice(1, k + 1), slice(1, mb + 1))):
        outside = torch.ones_like(storage, dtype=torch.bool)
        outside[rows, cols] = False
        untouched = storage[outside].isnan() if storage.is_floating_point() else storage[outside] == poison
        assert untouched.all()


def test_grouped_writes_stay_inside_the_flat_output():
    ks, h = [128, 0, 256], 200
    x = on_gpu((sum(ks), h), torch.bfloat16, 45)
    storage = torch.full((sum(ks) * h + 64,), 0x55, dtype=torch.uint8, device="cuda")
    flat = storage[16 : 16 + sum(ks) * h].view(torch.float8_e4m3fn)
    codes, sf = fgemm.per_token_cast_to_fp8(x, mn_major_scales=True)
    sft = torch.empty(h, 3, device="cuda")
    fgemm._C.grouped_cast_transpose_to_fp8(x, ks, codes, sf, flat, sft, False)
    assert_same((codes, sf, flat, sft), grouped_cast_transpose(x, ks))
    assert (storage[:16] == 0x55).all() and (storage[16 + sum(ks) * h :] == 0x55).all()


def test_capture_in_a_cuda_graph_on_the_current_stream():
    x = on_gpu((512, 7168), torch.bfloat16, 46)
    out = fgemm.cast_transpose_to_fp8(x)  # compiled and loaded before the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fgemm._C.cast_transpose_to_fp8(x, *out, False)
    x.copy_(on_gpu((512, 7168), torch.bfloat16, 47))
    graph.replay()
    torch.cuda.synchronize()
    assert_same(out, cast_transpose(x), "after a graph replay with new input")


@pytest.mark.parametrize("use_ue8m0", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,k", SHAPES)
def test_per_block_matches_per_block_of_the_weight_and_of_its_transpose_and_the_cpu(n, k, dtype, use_ue8m0):
    x = on_gpu((n, k), dtype, n * 10009 + k)
    out = fgemm.per_block_cast_transpose_to_fp8(x, use_ue8m0)
    assert all(t.is_cuda and t.is_contiguous() for t in out)
    expected = fgemm.per_block_cast_to_fp8(x, use_ue8m0) + fgemm.per_block_cast_to_fp8(x.t(), use_ue8m0)
    assert_same(out, expected, f"against per_block for [{n}, {k}] {dtype}")
    cpu = fgemm.per_block_cast_transpose_to_fp8(x.cpu(), use_ue8m0)
    assert_same(out, cpu, f"against the CPU backend for [{n}, {k}] {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("g,n,k", [(8, 2048, 7168), (3, 2112, 1000), (5, 100, 256), (2, 257, 130)])
def test_per_block_of_a_stack_is_that_of_each_matrix_and_the_cpu(g, n, k, dtype):
    # A magnitude of its own per matrix, so that a scale taken from the wrong one shows.
    x = on_gpu((g, n, k), dtype, g * 101 + n + k) * (16.0 ** torch.arange(g, device="cuda")).to(dtype)[:, None, None]
    out = fgemm.per_block_cast_transpose_to_fp8(x)
    assert [t.shape for t in out] == [(g, n, k), (g, math.ceil(n / 128), math.ceil(k / 128)), (g, k, n),
                                     (g, math.ceil(k / 128), math.ceil(n / 128))]
    for i in range(g):
        assert_same([t[i] for t in out], fgemm.per_block_cast_to_fp8(x[i]) + fgemm.per_block_cast_to_fp8(x[i].t()),
                    f"matrix {i} of [{g}, {n}, {k}] {dtype}")
    assert_same(out, fgemm.per_block_cast_transpose_to_fp8(x.cpu()), f"against the CPU backend for [{g}, {n}, {k}]")


def test_per_block_of_a_stack_writes_only_its_matrices():
    g, n, k = 3, 300, 200
    x = on_gpu((g, n, k), torch.bfloat16, 49)
    poison = 0x55
    # Each output a slice of a larger stack: matrices 1 .. g of g + 2, so that a write past either end shows.
    code_storage = torch.full((g + 2, n, k), poison, dtype=torch.uint8, device="cuda")
    transposed_storage = torch.full((g + 2, k, n), poison, dtype=torch.uint8, device="cuda")
    nb, kb = math.ceil(n / 128), math.ceil(k / 128)
    sf_storage = torch.full((g + 2, nb, kb), float("nan"), device="cuda")
    sft_storage = torch.full((g + 2, kb, nb), float("nan"), device="cuda")
    inside = slice(1, g + 1)
    outputs = (code_storage[inside].view(torch.float8_e4m3fn), sf_storage[inside],
               transposed_storage[inside].view(torch.float8_e4m3fn), sft_storage[inside])
    fgemm._C.per_block_cast_transpose_to_fp8(x, *outputs, False)
    assert_same(outputs, fgemm.per_block_cast_transpose_to_fp8(x.cpu()))
    for storage in (code_storage, transposed_storage, sf_storage, sft_storage):
        for outside in (storage[0], storage[g + 1]):
            assert (outside.isnan() if storage.is_floating_point() else outside == poison).all()


def test_per_block_writes_stay_inside_the_outputs():
    n, k = 300, 1000
    x = on_gpu((n, k), torch.bfloat16, 48)
    poison = 0x55
    code_storage = torch.full((n + 2, k + 32), poison, dtype=torch.uint8, device="cuda")
    codes = code_storage.view(torch.float8_e4m3fn)[1 : n + 1, 3 : 3 + k]
    transposed_storage = torch.full((k + 2, n + 48), poison, dtype=torch.uint8, device="cuda")
    transposed = transposed_storage.view(torch.float8_e4m3fn)[1 : k + 1, 3 : 3 + n]
    nb, kb = math.ceil(n / 128), math.ceil(k / 128)
    sf_storage = torch.full((nb + 2, kb + 2), float("nan"), device="cuda")
    sf = sf_storage[1 : nb + 1, 1 : kb + 1]
    sft_storage = torch.full((kb + 1, nb + 3), float("nan"), device="cuda")
    sft = sft_storage[:kb, 2 : nb + 2]
    fgemm._C.per_block_cast_transpose_to_fp8(x, codes, sf, transposed, sft, False)
    assert_same((codes, sf, transposed, sft), fgemm.per_block_cast_to_fp8(x) + fgemm.per_block_cast_to_fp8(x.t()))
    for storage, rows, cols in ((code_storage, slice(1, n + 1), slice(3, 3 + k)),
                                (transposed_storage, slice(1, k + 1), slice(3, 3 + n)),
                                (sf_storage, slice(1, nb + 1), slice(1, kb + 1)),
                                (sft_storage, slice(0, kb), slice(2, nb + 2))):
        outside = torch.ones_like(storage, dtype=torch.bool)
        outside[rows, cols] = False
        untouched = storage[outside].isnan() if storage.is_floating_point() else storage[outside] == poison
        assert untouched.all()


# Both access widths of x and of the transposed codes, both input types, both scale layouts, the grouped layout
# over two launches and with padded experts, and a weight's blocks, alone and in a stack.
SANITIZED_PROGRAM = """
import torch, fgemm
for shape, dtype in [((300, 400), torch.bfloat16), ((130, 260), torch.float32), ((256, 136), torch.bfloat16)]:
    x = torch.randn(*shape, device="cuda", dtype=dtype)
    fgemm.cast_transpose_to_fp8(x)
    fgemm.cast_transpose_to_fp8(x, mn_major_scales=False)
    fgemm.per_block_cast_transpose_to_fp8(x)
fgemm.per_block_cast_transpose_to_fp8(torch.randn(3, 200, 136, device="cuda", dtype=torch.bfloat16))
ks = [128 * (g % 2) for g in range(70)]
fgemm.grouped_cast_transpose_to_fp8(torch.randn(sum(ks), 200, device="cuda", dtype=torch.bfloat16), ks)
ks = [100, 0, 300]
fgemm.grouped_cast_transpose_to_fp8(torch.randn(sum(ks), 200, device="cuda", dtype=torch.bfloat16), ks)
torch.cuda.synchronize()
"""


@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
def test_compute_sanitizer_is_clean(tool, tmp_path):
    assert_sanitizer_clean(SANITIZED_PROGRAM, tmp_path, tool=tool)
