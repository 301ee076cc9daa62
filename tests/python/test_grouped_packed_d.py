"""The contiguous GEMM's packed D (d_row_starts, the prefix-sum layout): each expert's rows written from its own
first row of d, without the padding, bit for bit the rows the padded D gets; rows past d's end and outside the
experts' rows untouched; the errors; on the CPU and (marked gpu) on the GPU, with memcheck and racecheck."""

import pytest
import torch

import fgemm
from sanitizer import assert_sanitizer_clean

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
ALIGNMENT = 128


def round_up(count):
    return -(-count // ALIGNMENT) * ALIGNMENT


def operands(counts, n, k, device, seed=0):
    """(a, sfa) in the padded layout, (b, sfb) per expert, psum and the tokens' starts (int32, on `device`)."""
    generator = torch.Generator().manual_seed(seed)
    rows = sum(round_up(count) for count in counts)
    a = fgemm.per_token_cast_to_fp8(torch.randn(rows, k, generator=generator).to(device), mn_major_scales=True)
    b = fgemm.per_block_cast_to_fp8(torch.randn(len(counts), n, k, generator=generator).to(device))
    psum, starts, start, tokens = [], [], 0, 0
    for count in counts:
        psum.append(start + count)
        starts.append(tokens)
        start, tokens = start + round_up(count), tokens + count
    return a, b, torch.tensor(psum, dtype=torch.int32, device=device), torch.tensor(starts, dtype=torch.int32,
                                                                                   device=device)


def poisoned(rows, n, dtype, device):
    return torch.full((rows, n), float("nan"), dtype=dtype, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("counts,n,k", [([100, 0, 300, 1], 272, 256), ([128, 256], 256, 512), ([0, 0, 5], 64, 128),
                                        ([700, 129, 1000, 33], 1000, 784)])
@pytest.mark.parametrize("out", [torch.bfloat16, torch.float32])
def test_each_expert_gets_the_rows_of_the_padded_d(device, counts, n, k, out):
    a, b, psum, starts = operands(counts, n, k, device, seed=sum(counts) + n)
    padded = poisoned(sum(round_up(count) for count in counts), n, out, device)
    fgemm.m_grouped_fp8_gemm_nt_contiguous(a, b, padded, psum, use_psum_layout=True)
    tokens, spare = sum(counts), 3
    packed = poisoned(tokens + spare, n, out, device)
    fgemm.m_grouped_fp8_gemm_nt_contiguous(a, b, packed, psum, use_psum_layout=True, d_row_starts=starts)
    first = 0
    for count, start in zip(counts, starts.tolist()):
        assert torch.equal(packed[start : start + count], padded[first : first + count]), (counts, start)
        first += round_up(count)
    assert packed[tokens:].isnan().all()  # past the experts' rows: untouched


@pytest.mark.parametrize("device", DEVICES)
def test_rows_past_d_are_not_written(device):
    counts, n, k = [200, 100], 128, 128
    a, b, psum, _ = operands(counts, n, k, device)
    storage = poisoned(300 + 2, n, torch.bfloat16, device)
    d = storage[:250]  # expert 1's rows would run to 300
    starts = torch.tensor([0, 200], dtype=torch.int32, device=device)
    if device == "cpu":  # the host reads the starts, and refuses what does not fit
        with pytest.raises(ValueError, match="argument 'd_row_starts' holds 200 for expert 1"):
            fgemm.m_grouped_fp8_gemm_nt_contiguous(a, b, d, psum, use_psum_layout=True, d_row_starts=starts)
        return
    fgemm.m_grouped_fp8_gemm_nt_contiguous(a, b, d, psum, use_psum_layout=True, d_row_starts=starts)
    assert not d.isnan().any() and storage[250:].isnan().all()


def test_errors_name_the_argument():
    counts, n, k = [100, 28], 128, 128
    a, b, psum, starts = operands(counts, n, k, "cpu")
    d = torch.empty(128, n, dtype=torch.bfloat16)
    call = fgemm.m_grouped_fp8_gemm_nt_contiguous
    with pytest.raises(ValueError, match="argument 'd_row_starts' packs D's rows in the prefix-sum form alone"):
        call(a, b, torch.empty(256, n, dtype=torch.bfloat16), torch.zeros(256, dtype=torch.int32), d_row_starts=starts)
    with pytest.raises(TypeError, match="argument 'd_row_starts' has dtype torch.int64"):
        call(a, b, d, psum, use_psum_layout=True, d_row_starts=starts.long())
    with pytest.raises(TypeError, match="argument 'd_row_starts' expected dtype int32"):
        call(a, b, d, psum, use_psum_layout=True, d_row_starts=starts.float())
    with pytest.raises(ValueError, match="argument 'd_row_starts' expected shape \\[2\\]"):
        call(a, b, d, psum, use_psum_layout=True, d_row_starts=starts[:1])
    with pytest.raises(ValueError, match="argument 'd' expected shape \\[128, 128\\]"):
        call(a, b, d[:, :64], psum, use_psum_layout=True, d_row_starts=starts)
    with pytest.raises(ValueError, match="argument 'd_row_starts' holds -1 for expert 0"):
        call(a, b, d, psum, use_psum_layout=True, d_row_starts=torch.tensor([-1, 100], dtype=torch.int32))


SANITIZED_PROGRAM = """
import torch, fgemm
from test_grouped_packed_d import operands
for out in (torch.bfloat16, torch.float32):
    a, b, psum, starts = operands([100, 0, 300, 1], 272, 256, "cuda")
    d = torch.empty(401, 272, dtype=out, device="cuda")
    fgemm.m_grouped_fp8_gemm_nt_contiguous(a, b, d, psum, use_psum_layout=True, d_row_starts=starts)
torch.cuda.synchronize()
"""


@pytest.mark.gpu
@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
def test_compute_sanitizer_is_clean(tool, tmp_path):
    assert_sanitizer_clean(SANITIZED_PROGRAM, tmp_path, tool=tool)
