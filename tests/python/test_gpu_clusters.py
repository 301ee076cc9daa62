"""Two-CTA clusters with TMA multicast, forced on every layout: tiles paired along M share B, along N share A.

A cluster tile whose pair runs past the problem (an odd number of tile rows, in the masked layout known only
on the device) or spans two experts must still come out right."""

import random

import pytest
import torch

import fgemm
from gpu_reference import MAX_DIFF, forced_config, random_operands, reference_gemm
from test_gpu_grouped import SFA_LAYOUTS, check_contiguous, run_masked, sfa_in_layout

pytestmark = pytest.mark.gpu

CLUSTER_CONFIGS = [(128, 128, 2, 1), (64, 64, 1, 2), (128, 96, 1, 2), (64, 256, 2, 1), (128, 256, 2, 1),
                   (128, 256, 1, 2)]


def check_normal(m, n, k, sfa_layout):
    """fp8_gemm_nt into a NaN-poisoned D, under whatever configuration is forced, against the reference."""
    (a, sfa), (b, sfb) = random_operands(m, n, k)
    d = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    fgemm.fp8_gemm_nt((a, sfa_in_layout(sfa, sfa_layout)), (b, sfb), d)
    torch.cuda.synchronize()
    assert fgemm.calc_diff(d, reference_gemm(a, sfa, b, sfb)) < MAX_DIFF


@pytest.mark.parametrize("config", CLUSTER_CONFIGS)
@pytest.mark.parametrize("m,n,k,sfa_layout", [(1, 2112, 7168, "mn-major"), (200, 1000, 400, "row-major"),
                                              (333, 4528, 1280, "mn-major"), (4096, 7168, 2048, "mn-major")])
def test_normal_layout_with_multicast(config, m, n, k, sfa_layout):
    with forced_config(*config):
        check_normal(m, n, k, sfa_layout)


@pytest.mark.parametrize("sfa_layout", SFA_LAYOUTS)
@pytest.mark.parametrize("config", CLUSTER_CONFIGS)
def test_contiguous_layout_with_multicast_across_expert_boundaries(config, sfa_layout):
    # Experts of 1 to 3 tiles of 128 rows: cluster pairs of tile rows often straddle two experts.
    rng = random.Random(config[1])
    sizes = [rng.choice([0, 100, 128, 200, 300, 384]) for _ in range(9)]
    with forced_config(*config):
        check_contiguous(sizes, 1000, 640, sfa_layout=sfa_layout)


@pytest.mark.parametrize("sfa_layout", SFA_LAYOUTS)
@pytest.mark.parametrize("config", CLUSTER_CONFIGS)
def test_masked_layout_with_odd_tile_rows(config, sfa_layout):
    # 576 rows: 4.5 tiles of 128, 9 of 64; every group full, then random counts.
    with forced_config(*config):
        run_masked(5, 576, 4528, 1280, [576] * 5, sfa_layout=sfa_layout)
        rng = random.Random(config[0] + config[1])
        for _ in range(5):
            counts = [rng.choice([0, 1, 129, 576, rng.randint(0, 576)]) for _ in range(5)]
            run_masked(5, 576, 4528, 1280, counts, sfa_layout=sfa_layout)


def test_masked_cuda_graph_replays_with_multicast():
    with forced_config(128, 128, 2, 1):
        from test_gpu_grouped import test_masked_cuda_graph_replays_with_new_counts
        test_masked_cuda_graph_replays_with_new_counts()


# Three math warpgroups: tiles of 192 rows (normal and masked layouts; the contiguous layout's 128-row
# alignment rules them out).
@pytest.mark.parametrize("config", [(192, 128, 1, 1), (192, 96, 1, 1), (192, 128, 2, 1), (192, 64, 1, 2)])
def test_three_math_warpgroups(config):
    with forced_config(*config):
        for m, n, k, sfa_layout in [(1, 2112, 7168, "mn-major"), (333, 4528, 1280, "row-major"),
                                    (4096, 7168, 2048, "mn-major")]:
            check_normal(m, n, k, sfa_layout)
        for sfa_layout in SFA_LAYOUTS:
            run_masked(5, 576, 4528, 1280, [576, 0, 200, 1, 577 - 1], sfa_layout=sfa_layout)
    with forced_config(*config), pytest.raises(ValueError, match="not a supported configuration"):
        check_contiguous([100, 200], 256, 256)


# 128 x 256 tiles: each math warpgroup multiplies its 256 columns in two halves through one partial
# accumulator. N not a multiple of 256 (or of 128), K not a multiple of 128, M of one row to many tiles.
def test_column_halves_on_every_layout():
    with forced_config(128, 256, 1, 1):
        for m, n, k, sfa_layout in [(1, 2112, 7168, "mn-major"), (200, 1000, 400, "row-major"),
                                    (333, 4528, 1280, "mn-major"), (4096, 7168, 2048, "mn-major"),
                                    (129, 264, 256, "row-major")]:
            check_normal(m, n, k, sfa_layout)
        for sfa_layout in SFA_LAYOUTS:
            check_contiguous([0, 100, 128, 200, 300, 384, 1], 1000, 640, sfa_layout=sfa_layout)
            run_masked(5, 576, 4528, 1280, [576, 0, 200, 1, 129], sfa_layout=sfa_layout)


def test_column_halves_need_bf16_output_without_c():
    (a, sfa), (b, sfb) = random_operands(128, 256, 256)
    d = torch.empty(128, 256, dtype=torch.float32, device="cuda")
    with forced_config(128, 256, 1, 1), pytest.raises(ValueError, match="not a supported configuration"):
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
