"""The m-grouped GEMMs for Mixture-of-Experts on a Hopper GPU: contiguous and masked layouts."""

import random

import pytest
import torch

import fgemm
from gpu_reference import MAX_DIFF, dequantize_blocks, dequantize_rows
from sanitizer import assert_sanitizer_clean

pytestmark = pytest.mark.gpu

ALIGNMENT = fgemm.get_m_alignment_for_contiguous_layout()
# sfa as the kernels take it: MN-major (loaded by the TMA with A) or row-major (copied by a scale loader).
SFA_LAYOUTS = ["mn-major", "row-major"]


def sfa_in_layout(sfa, layout):
    return fgemm.get_mn_major_tma_aligned_tensor(sfa) if layout == "mn-major" else sfa


def grouped_weights(groups, n, k):
    """Random expert weights [G, N, K] quantized per 128 x 128 block: (b, sfb [G, ceil(N/128), ceil(K/128)])."""
    pairs = [fgemm.per_block_cast_to_fp8(torch.randn(n, k, device="cuda", dtype=torch.bfloat16)) for _ in range(groups)]
    return torch.stack([b for b, _ in pairs]), torch.stack([sfb for _, sfb in pairs])


def activations(*shape):
    """Random activations [..., K] quantized per 1 x 128: (a, sfa [..., ceil(K/128)])."""
    x = torch.randn(*shape, device="cuda", dtype=torch.bfloat16)
    a, sfa = fgemm.per_token_cast_to_fp8(x.reshape(-1, shape[-1]))
    return a.reshape(shape), sfa.reshape(*shape[:-1], sfa.shape[-1])


# ---------------------------------------------------------------------------------------------- contiguous


def contiguous_layout(rows_per_group, tail_rows=0):
    """m_indices for experts of the given sizes, each segment padded with -1 rows to the alignment, then
    tail_rows more -1 rows (serving frameworks size M_sum for the worst case and leave the rest padding)."""
    indices = []
    for group, rows in enumerate(rows_per_group):
        indices += [group] * rows
        indices += [-1] * (-len(indices) % ALIGNMENT)
    indices += [-1] * tail_rows
    return torch.tensor(indices, dtype=torch.int32, device="cuda")


def check_contiguous(rows_per_group, n, k, out_dtype=torch.bfloat16, sfa_layout="mn-major", tail_rows=0):
    check_contiguous_indices(contiguous_layout(rows_per_group, tail_rows), len(rows_per_group), n, k, out_dtype,
                             sfa_layout)


def check_contiguous_indices(m_indices, groups, n, k, out_dtype=torch.bfloat16, sfa_layout="mn-major", width=None):
    """D is [M_sum, N], or with `width` the first N columns of a NaN-poisoned [M_sum, width], whose columns
    past N must stay NaN."""
    m_sum = m_indices.numel()
    a, sfa = activations(m_sum, k)
    b, sfb = grouped_weights(groups, n, k)
    outer = torch.full((m_sum, width or n), float("nan"), dtype=out_dtype, device="cuda")
    d = outer[:, :n]
    fgemm.m_grouped_fp8_gemm_nt_contiguous((a, sfa_in_layout(sfa, sfa_layout)), (b, sfb), d, m_indices)
    torch.cuda.synchronize()
    a_ref, b_ref = dequantize_rows(a, sfa), dequantize_blocks(b, sfb)
    for group in range(groups):
        rows = (m_indices == group).nonzero().squeeze(1)
        if rows.numel() == 0:
            continue
        got = d[rows]
        assert not torch.isnan(got).any(), f"expert {group}: unwritten rows"
        diff = fgemm.calc_diff(got, a_ref[rows] @ b_ref[group].T)
        assert diff < MAX_DIFF, f"expert {group}: calc_diff {diff:.2e}"
    padding = m_indices == -1
    assert torch.isnan(d[padding]).all(), "padding rows must keep what D held"
    assert torch.isnan(outer[:, n:]).all(), "columns past N were written"


@pytest.mark.parametrize("sfa_layout", SFA_LAYOUTS)
@pytest.mark.parametrize("groups,m_per_group,n,k", [(4, 8192, 4096, 7168), (4, 8192, 7168, 2048),
                                                    (8, 4096, 4096, 7168), (8, 4096, 7168, 2048)])
def test_contiguous_seed_shapes(groups, m_per_group, n, k, sfa_layout):
    check_contiguous([m_per_group] * groups, n, k, sfa_layout=sfa_layout)


def random_contiguous_cases(count, seed):
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        groups = rng.choice([1, 2, 3, 5, 8, 16, 33, 64])
        sizes = [rng.choice([0, 1, 77, 128, 200, 513, rng.randint(0, 4096 // max(1, groups // 4))]) for _ in range(groups)]
        if sum(sizes) == 0:
            sizes[0] = 5
        cases.append((sizes, rng.choice([24, 200, 1000, 2112, 4528]), rng.choice([128, 400, 1280, 2048]),
                      SFA_LAYOUTS[len(cases) % 2]))
    return cases


@pytest.mark.parametrize("sizes,n,k,sfa_layout", random_contiguous_cases(12, seed=5))
def test_contiguous_random_layouts(sizes, n, k, sfa_layout):
    check_contiguous(sizes, n, k, sfa_layout=sfa_layout)


def test_contiguous_worst_case_m_sum_with_padding_tiles():
    # M_sum sized as serving frameworks size it: every expert's rows plus G x 127 rows, rounded up to 128; the
    # rows past the aligned segments are -1, whole tiles of them (here 5 of 25 tile rows).
    sizes = [300, 5, 0, 1000, 77, 640, 128, 1]
    used = sum(fgemm.ceil_div(rows, ALIGNMENT) * ALIGNMENT for rows in sizes)
    worst = fgemm.ceil_div(sum(sizes) + len(sizes) * (ALIGNMENT - 1), ALIGNMENT) * ALIGNMENT
    check_contiguous(sizes, 4096, 512, tail_rows=worst - used)


def test_contiguous_padding_before_and_between_rows_of_a_tile():
    # A tile takes the expert of its first row that is not padding, wherever the padding lies in it.
    blocks = [[-1] * 50 + [0] * 78, [-1] * 40 + [1] * 40 + [-1] * 48, [-1] * 127 + [2], [-1] * 128, [2] * 128]
    m_indices = torch.tensor(sum(blocks, []), dtype=torch.int32, device="cuda")
    check_contiguous_indices(m_indices, 3, 1000, 640)


@pytest.mark.parametrize("out_dtype,n,width", [(torch.bfloat16, 1001, 1008), (torch.float32, 1001, 1004),
                                               (torch.bfloat16, 260, 264)])
def test_contiguous_ragged_n_in_a_wider_output(out_dtype, n, width):
    # Rows of D that do not end on a 16-byte boundary: the tiles at N's edge are stored element by element.
    m_indices = contiguous_layout([300, 0, 129, 77])
    check_contiguous_indices(m_indices, 4, n, 640, out_dtype, width=width)


def test_contiguous_fp32_output():
    check_contiguous([300, 0, 129], 1000, 640, torch.float32)


def test_contiguous_misaligned_segments_give_nan_not_wrong_numbers():
    m_indices = torch.tensor([0] * 100 + [1] * 156, dtype=torch.int32, device="cuda")  # expert 1 starts at row 100
    a, sfa = activations(256, 256)
    b, sfb = grouped_weights(2, 128, 256)
    d = torch.zeros(256, 128, dtype=torch.bfloat16, device="cuda")
    fgemm.m_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, m_indices)
    ref = dequantize_rows(a, sfa)[:100] @ dequantize_blocks(b, sfb)[0].T
    assert fgemm.calc_diff(d[:100], ref) < MAX_DIFF
    assert torch.isnan(d[100:128]).all(), "rows of another expert inside expert 0's tile must not look valid"
    assert not torch.isnan(d[128:]).any()


def test_contiguous_expert_index_out_of_range_gives_nan():
    m_indices = torch.tensor([0] * 128 + [7] * 128, dtype=torch.int32, device="cuda")  # G = 2
    a, sfa = activations(256, 256)
    b, sfb = grouped_weights(2, 128, 256)
    d = torch.zeros(256, 128, dtype=torch.bfloat16, device="cuda")
    fgemm.m_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, m_indices)
    torch.cuda.synchronize()
    assert torch.isnan(d[128:]).all()
    assert not torch.isnan(d[:128]).any()


# ---------------------------------------------------------------------------------------------- masked


def masked_reference(a, sfa, b, sfb, masked_m):
    return dequantize_rows(a, sfa) @ dequantize_blocks(b, sfb).transpose(1, 2), masked_m.tolist()


def check_masked(d, ref, counts, context=""):
    for group, rows in enumerate(counts):
        if rows > 0:
            assert not torch.isnan(d[group, :rows]).any(), f"group {group} {context}: unwritten rows"
            diff = fgemm.calc_diff(d[group, :rows], ref[group, :rows])
            assert diff < MAX_DIFF, f"group {group} {context}: calc_diff {diff:.2e}"
        assert torch.isnan(d[group, rows:]).all(), f"group {group} {context}: rows past masked_m were written"


def run_masked(groups, m_max, n, k, counts, expected_m=None, sfa_layout="mn-major"):
    a, sfa = activations(groups, m_max, k)
    b, sfb = grouped_weights(groups, n, k)
    masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
    d = torch.full((groups, m_max, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa_in_layout(sfa, sfa_layout)), (b, sfb), d, masked_m,
                                       expected_m or max(1, max(counts)))
    torch.cuda.synchronize()
    ref, _ = masked_reference(a, sfa, b, sfb, masked_m)
    check_masked(d, ref, counts)


@pytest.mark.parametrize("sfa_layout", SFA_LAYOUTS)
@pytest.mark.parametrize("groups,m_per_group,n,k", [(1, 1024, 4096, 7168), (1, 1024, 7168, 2048),
                                                    (2, 512, 4096, 7168), (2, 512, 7168, 2048),
                                                    (4, 256, 4096, 7168), (4, 256, 7168, 2048)])
def test_masked_seed_shapes(groups, m_per_group, n, k, sfa_layout):
    run_masked(groups, m_per_group, n, k, [m_per_group] * groups, sfa_layout=sfa_layout)


@pytest.mark.parametrize("sfa_layout", SFA_LAYOUTS)
def test_masked_odd_number_of_tiles_per_group(sfa_layout):
    # 576 rows = 4.5 tiles of 128: the shape on which a 2-CTA cluster can pair tiles of two experts.
    run_masked(5, 576, 4528, 1280, [576] * 5, sfa_layout=sfa_layout)


def random_masked_cases(count, seed):
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        groups = rng.choice([1, 2, 3, 5, 8, 16, 64, 256])
        m_max = rng.choice([1, 64, 100, 576, 1024, 4096 if groups <= 8 else 256])
        counts = [rng.choice([0, 1, m_max, rng.randint(0, m_max)]) for _ in range(groups)]
        cases.append((groups, m_max, rng.choice([24, 200, 1000, 4528, 7168]), rng.choice([128, 400, 1280, 2048]),
                      counts, SFA_LAYOUTS[len(cases) % 2]))
    return cases


@pytest.mark.parametrize("groups,m_max,n,k,counts,sfa_layout", random_masked_cases(12, seed=9))
def test_masked_random(groups, m_max, n, k, counts, sfa_layout):
    run_masked(groups, m_max, n, k, counts, sfa_layout=sfa_layout)


def test_masked_counts_beyond_m_max_are_clamped():
    run_masked(3, 200, 256, 256, [500, -3, 200], expected_m=100)


def test_masked_cuda_graph_replays_with_new_counts():
    groups, m_max, n, k = 6, 576, 4528, 1280
    a, sfa = activations(groups, m_max, k)
    b, sfb = grouped_weights(groups, n, k)
    masked_m = torch.full((groups,), m_max, dtype=torch.int32, device="cuda")
    d = torch.empty(groups, m_max, n, dtype=torch.bfloat16, device="cuda")
    sfa_mn_major = fgemm.get_mn_major_tma_aligned_tensor(sfa)
    fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa_mn_major), (b, sfb), d, masked_m, 300)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa_mn_major), (b, sfb), d, masked_m, 300)
    ref = dequantize_rows(a, sfa) @ dequantize_blocks(b, sfb).transpose(1, 2)
    rng = random.Random(3)
    for replay in range(100):
        if replay == 0:
            counts = [0] * groups
        elif replay == 1:
            counts = [m_max] * groups
        else:
            counts = [rng.choice([0, 1, m_max, rng.randint(0, m_max)]) for _ in range(groups)]
        masked_m.copy_(torch.tensor(counts, dtype=torch.int32))
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check_masked(d, ref, counts, f"replay {replay}")


def test_masked_m_on_the_host_is_refused():
    a, sfa = activations(2, 64, 128)
    b, sfb = grouped_weights(2, 128, 128)
    d = torch.empty(2, 64, 128, dtype=torch.bfloat16, device="cuda")
    with pytest.raises(ValueError, match="masked_m"):
        fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa), (b, sfb), d, torch.tensor([1, 2], dtype=torch.int32), 2)


# ---------------------------------------------------------------------------------------------- sanitizers

GROUPED_MEMCHECK_PROGRAM = """
import contextlib, torch
from gpu_reference import forced_config
from test_gpu_grouped import check_contiguous, check_contiguous_indices, contiguous_layout, run_masked
padding_inside_tiles = [[-1] * 50 + [0] * 78, [-1] * 40 + [1] * 40 + [-1] * 48, [-1] * 127 + [2], [-1] * 128]
# The heuristics' choice, 128 x 256 tiles (partial tiles staged and copied out by rows), and two clusters.
for config in [None, (128, 256, 1, 1), (128, 256, 2, 1), (64, 128, 1, 2)]:
    with forced_config(*config) if config else contextlib.nullcontext():
        check_contiguous([300, 5, 0, 129, 77], 1000, 256, tail_rows=384)
        check_contiguous_indices(torch.tensor(sum(padding_inside_tiles, []), dtype=torch.int32, device="cuda"),
                                 3, 1000, 256)
        check_contiguous_indices(contiguous_layout([300, 0, 129]), 3, 1001, 256, torch.bfloat16, width=1008)
        if config is None or config[1] <= 128:  # FP32 staging of 128 x 256 tiles does not fit shared memory
            check_contiguous_indices(contiguous_layout([300, 0, 129]), 3, 1001, 256, torch.float32, width=1004)
        run_masked(3, 300, 1000, 256, [0, 77, 300])
"""


def test_compute_sanitizer_memcheck_is_clean_on_partial_tiles(tmp_path):
    # Padding rows before, between and after a tile's rows, whole tiles of padding, a ragged N inside a wider D
    # and groups that end inside a tile: the tiles that are stored a row at a time.
    assert_sanitizer_clean(GROUPED_MEMCHECK_PROGRAM, tmp_path)


GROUPED_RACECHECK_PROGRAM = """
import torch
from test_gpu_grouped import check_contiguous, run_masked
check_contiguous([100, 0, 129], 256, 256)
run_masked(3, 150, 256, 384, [0, 77, 150])
"""


def test_compute_sanitizer_racecheck_is_clean_on_grouped_layouts(tmp_path):
    assert_sanitizer_clean(GROUPED_RACECHECK_PROGRAM, tmp_path, tool="racecheck")
