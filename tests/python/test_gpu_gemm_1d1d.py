"""The FP8 weight-gradient GEMMs (recipe 1D1D) on the GPU (checks_1d1d.py): fp8_gemm_nt with B scaled per 1x128
block, every output, C separate and C as D, scales MN-major (loaded by the TMA) and row-major (copied by the
producer's helper warp), M, N and K off the tiles' multiples; the k-grouped GEMM with empty experts, more
experts than one launch's tensor maps, accumulating in FP32 (C apart or in place) and into BF16 (with or without
C); tiles of two and of three math warpgroups; and compute-sanitizer's memcheck and racecheck."""

import pytest
import torch

from checks_1d1d import check_k_grouped, check_normal
from gpu_reference import forced_config
from sanitizer import assert_sanitizer_clean

pytestmark = pytest.mark.gpu

SHAPES = [(1, 16, 128), (127, 136, 400), (300, 1000, 784), (2112, 4096, 7168), (4097, 256, 2048)]


@pytest.mark.parametrize("out", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("mn_major", [True, False])
def test_normal(out, mn_major):
    for m, n, k in SHAPES:
        check_normal(m, n, k, out, "cuda", mn_major=mn_major, seed=m)


@pytest.mark.parametrize("out,c_mode", [(torch.float32, "c"), (torch.float32, "d"), (torch.bfloat16, "c16"),
                                        (torch.bfloat16, "d")])
@pytest.mark.parametrize("mn_major", [True, False])
def test_normal_accumulates_onto_c(out, c_mode, mn_major):
    for m, n, k in SHAPES:
        check_normal(m, n, k, out, "cuda", c_mode=c_mode, mn_major=mn_major, seed=n)


@pytest.mark.parametrize("ks,m,n", [
    ([128], 64, 64),
    ([128, 0, 384, 256], 72, 136),
    ([0, 0, 0], 128, 128),
    ([512, 1024, 128, 0, 2048, 256, 384, 640], 576, 1024),
    ([128 * (g % 3) for g in range(40)], 200, 264),  # more experts than one launch's tensor maps
])
@pytest.mark.parametrize("c_mode,out", [("c", torch.float32), ("d", torch.float32), (None, torch.bfloat16),
                                        ("c", torch.bfloat16), ("d", torch.bfloat16)],
                         ids=["fp32+c", "fp32-in-place", "bf16", "bf16+c", "bf16-in-place"])
def test_k_grouped(ks, m, n, c_mode, out):
    check_k_grouped(ks, m, n, "cuda", c_mode=c_mode, out=out, seed=len(ks))


@pytest.mark.parametrize("mn_major", [True, False])
def test_k_grouped_scale_layouts(mn_major):
    check_k_grouped([256, 128, 0, 640], 256, 512, "cuda", mn_major=mn_major)


def test_k_grouped_refills_its_ring_of_c_beside_the_helper_warp():
    """An expert of a single K block among longer ones, a C of its own and row-major scales, on 128 x 128 tiles
    whose ring holds three of C's four chunks: the epilogue refills a slot as soon as every thread has read it,
    while the helper warp copies the next tiles' scales. On an H100 the refill overwrote an 8-column group of C
    before it had been read, in every call, until each thread fenced its reads into the async proxy
    (epilogue_c_ring.cuh)."""
    with forced_config(128, 128, 1, 1, 0, c_slots=3):
        for seed in range(3):
            check_k_grouped([1152, 768, 128, 2688], 3564, 3160, "cuda", out=torch.bfloat16, mn_major=False, seed=seed)


@pytest.mark.parametrize("block_n", [32, 64, 96, 128])
@pytest.mark.parametrize("mn_major", [True, False])
def test_three_math_warpgroups(block_n, mn_major):
    """192-row tiles: three math warpgroups, each with one partial accumulator, promoting every K block as soon as
    its MMAs are complete (math_row_blocks.cuh), over several tiles per CTA and partial tiles at every edge. At 128
    columns, FP32 D and a C of its own leave room for three stages, and a tile with a ring of C is offered with
    four where others have them (src/cuda/candidates.cpp): that one cannot be forced."""
    epilogues = [(torch.bfloat16, None), (torch.float32, "d"), (torch.float32, "c"), (torch.bfloat16, "c16")]
    if block_n == 128:
        epilogues.remove((torch.float32, "c"))
    with forced_config(192, block_n, 1, 1):
        for out, c_mode in epilogues:
            check_normal(2000, 2000, 1408, out, "cuda", c_mode=c_mode, mn_major=mn_major, seed=block_n)
            # In place at K <= 512, D is read through C's ring (src/cuda/gemm_sm90.cpp), which 128 columns cannot
            # be forced with: there the short case runs K = 640, added to D by the reduction store.
            short_k = 640 if block_n == 128 and c_mode == "d" else 400
            check_normal(193, 136, short_k, out, "cuda", c_mode=c_mode, mn_major=mn_major, seed=block_n + 1)
        for c_mode, out in [("d", torch.float32), (None, torch.bfloat16), ("c", torch.bfloat16)]:
            check_k_grouped([128, 0, 384, 1280, 256], 400, 520, "cuda", c_mode=c_mode, out=out, mn_major=mn_major,
                            seed=block_n)


def test_every_call_right_while_stages_refill():
    """One GEMM called again and again against one float64 reference, every element checked each time: the TMA's
    refill of a stage must never overtake a math thread's pending loads of the stage's scales (stage_loads_done in
    stage_ring.cuh). Without that fence, a 192 x 128 variant with four stages (not shipped) returned wrong elements in
    3 to 25 of 25 calls of such shapes on an H100 (docs/PERFORMANCE.md)."""
    for m, n, k in [(3584, 4096, 2048), (8192, 4096, 512)]:
        check_normal(m, n, k, torch.bfloat16, "cuda", seed=m, calls=10)


def test_same_bits_every_call():
    from checks_1d1d import quantize_rows
    import fgemm

    a8, sfa = quantize_rows(torch.randn(1000, 4096, device="cuda"), True)
    b8, sfb = quantize_rows(torch.randn(2048, 4096, device="cuda"), True)
    outputs = []
    for _ in range(3):
        d = torch.empty(1000, 2048, device="cuda")
        fgemm.fp8_gemm_nt((a8, sfa), (b8, sfb), d, recipe=(1, 1, 128))
        outputs.append(d)
    assert torch.equal(outputs[0], outputs[1]) and torch.equal(outputs[0], outputs[2])


SANITIZED_PROGRAM = """
import fgemm, torch
from checks_1d1d import check_k_grouped, check_normal
check_normal(130, 264, 400, torch.bfloat16, "cuda")
check_normal(130, 264, 400, torch.float32, "cuda", c_mode="d", mn_major=False)
check_k_grouped([128, 0, 256], 72, 136, "cuda")
check_k_grouped([128, 256], 64, 48, "cuda", c_mode="d", mn_major=False)
check_k_grouped([128, 0, 256], 72, 136, "cuda", c_mode=None, out=torch.bfloat16)
fgemm._C._force_config(192, 64)  # three math warpgroups, one partial accumulator each
check_normal(200, 136, 512, torch.bfloat16, "cuda", c_mode="c16", mn_major=False)
check_k_grouped([128, 0, 256], 200, 72, "cuda", c_mode="d")
fgemm._C._force_config(192, 128)  # 128 columns per warpgroup: the math warpgroups take 160 registers
check_normal(200, 136, 512, torch.bfloat16, "cuda")
check_k_grouped([128, 0, 256], 200, 136, "cuda", c_mode="d")
fgemm._C._force_config(0, 0)
"""


@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
def test_sanitizer(tmp_path, tool):
    assert_sanitizer_clean(SANITIZED_PROGRAM, tmp_path, tool)
