"""fgemm.moe on two GPUs with NCCL (NVLink multicast off): against the single-process reference in prefill
and decode, the decode path captured in one CUDA graph and replayed with new routings, and a rank's failure
ending the other in bounded time. Skipped unless torch sees two CUDA devices.

    python -m pytest -m gpu tests/python/test_gpu_moe.py
"""

import multiprocessing

import pytest
import torch

from fgemm.moe import MULTICAST_OFF
from moe_workers import compare_with_reference, fail_on_rank_one, free_port, replay_decode_graph, run_ranks

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices"),
]


@pytest.fixture(autouse=True)
def multicast_off(monkeypatch):
    """The ranks inherit the environment: NCCL's NVLS and torch's symmetric memory stay off NVLink multicast."""
    for name, value in MULTICAST_OFF.items():
        monkeypatch.setenv(name, value)


def test_two_nccl_ranks_match_the_reference():
    codes, seconds = run_ranks(compare_with_reference, 2, (free_port(), "nccl"), deadline_s=300)
    assert codes == [0, 0], f"exit codes {codes} after {seconds:.0f} s (see the ranks' tracebacks above)"


def test_decode_captured_in_a_cuda_graph_replays_new_routings():
    codes, seconds = run_ranks(replay_decode_graph, 2, (free_port(),), deadline_s=300)
    assert codes == [0, 0], f"exit codes {codes} after {seconds:.0f} s (see the ranks' tracebacks above)"


def test_a_failed_rank_ends_the_other_in_bounded_time(monkeypatch):
    # With blocking wait a collective that times out raises in the calling thread, so the layer reports it;
    # without, NCCL's watchdog thread would abort the process, also in bounded time but with no error to read.
    monkeypatch.setenv("TORCH_NCCL_BLOCKING_WAIT", "1")
    context = multiprocessing.get_context("spawn")
    messages, rank_zero_ready = context.Queue(), context.Event()
    timeout_s = 20.0
    codes, seconds = run_ranks(fail_on_rank_one, 2, (free_port(), "nccl", timeout_s, messages, rank_zero_ready),
                              deadline_s=150)
    assert codes[1] == 3
    assert codes[0] not in (0, None), f"rank 0 ended with {codes[0]} after {seconds:.0f} s"
    message = messages.get(timeout=5)
    assert message.startswith("fgemm.moe: the all_to_all of the token counts failed on rank 0 of 2"), message
