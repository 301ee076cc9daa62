"""fgemm.moe on the CPU: two gloo ranks against the single-process reference (prefill and decode, uneven
routing with idle experts), a rank's failure ending in bounded time, and the argument checks."""

import datetime
import multiprocessing
import os

import pytest
import torch
import torch.distributed as dist

import fgemm.moe
from fgemm.moe.decode import combine_decode
from moe_workers import (HIDDEN, INTERMEDIATE, NUM_EXPERTS, TOKENS_PER_RANK, compare_with_reference,
                         expert_weights, fail_on_rank_one, free_port, routed_tokens, run_ranks)

OP = "fgemm.moe.ExpertParallelMoE"


def test_disable_multicast_turns_off_nccl_nvls_and_symmetric_memory_multicast(monkeypatch):
    for name in fgemm.moe.MULTICAST_OFF:
        monkeypatch.delenv(name, raising=False)
    fgemm.moe.disable_multicast()
    assert os.environ["NCCL_NVLS_ENABLE"] == "0" and os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] == "1"
    assert os.environ["NVSHMEM_DISABLE_NVLS"] == "1"


def test_two_gloo_ranks_match_the_reference_bit_for_bit():
    codes, seconds = run_ranks(compare_with_reference, 2, (free_port(), "gloo"), deadline_s=120)
    assert codes == [0, 0], f"exit codes {codes} after {seconds:.0f} s (see the ranks' tracebacks above)"


def test_a_failed_rank_ends_the_others_in_bounded_time_with_a_clear_error():
    context = multiprocessing.get_context("spawn")
    messages, rank_zero_ready = context.Queue(), context.Event()
    codes, seconds = run_ranks(fail_on_rank_one, 2, (free_port(), "gloo", 5.0, messages, rank_zero_ready),
                              deadline_s=60)
    assert codes[1] == 3
    assert codes[0] not in (0, None), f"rank 0 ended with {codes[0]} after {seconds:.0f} s"
    message = messages.get(timeout=5)
    assert message.startswith("fgemm.moe: the all_to_all of the token counts failed on rank 0 of 2"), message


@pytest.fixture
def one_rank_group():
    store = dist.HashStore()
    dist.init_process_group("gloo", store=store, rank=0, world_size=1, timeout=datetime.timedelta(seconds=30))
    yield
    dist.destroy_process_group()


@pytest.mark.parametrize("mode", ["prefill", "decode"])
def test_one_rank_holding_every_expert_matches_the_reference(one_rank_group, mode):
    gate_up, down = expert_weights(seed=0)
    layer = fgemm.moe.ExpertParallelMoE(NUM_EXPERTS, HIDDEN, INTERMEDIATE, decode_max_tokens=64)
    layer.load_expert_weights(gate_up, down)
    problem = routed_tokens(seed=1, num_tokens=sum(TOKENS_PER_RANK))
    assert torch.equal(layer(*problem, mode=mode), fgemm.moe.ReferenceMoE(gate_up, down)(*problem))


def test_decode_beyond_capacity_drops_the_extra_pairs_and_raises(one_rank_group):
    gate_up, down = expert_weights(seed=0)
    layer = fgemm.moe.ExpertParallelMoE(NUM_EXPERTS, HIDDEN, INTERMEDIATE, decode_max_tokens=16,
                                        max_tokens_per_expert=3)
    layer.load_expert_weights(gate_up, down)
    tokens, topk_ids, topk_weights = routed_tokens(seed=1, num_tokens=16)  # expert 0 gets more than 3 pairs
    dispatched = layer.dispatch(tokens, topk_ids, topk_weights, mode="decode")
    fits = dispatched.fits.view(topk_ids.shape)
    assert 0 < int((~fits).sum()) == int(dispatched.dropped)
    with pytest.raises(RuntimeError, match=rf"dropped {int(dispatched.dropped)} \(token, expert\) pairs on rank 0"):
        layer.combine(layer.run_experts(dispatched), dispatched, topk_weights, tokens.dtype)
    # What a captured graph returns (its combine has no check): the layer without the dropped pairs, exactly.
    output = combine_decode(layer.run_experts(dispatched), dispatched, topk_weights, tokens.dtype, group=None)
    expected = fgemm.moe.ReferenceMoE(gate_up, down)(tokens, topk_ids, topk_weights * fits)
    assert torch.equal(output, expected)


def test_quantize_weights_follows_the_masters(one_rank_group):
    layer = fgemm.moe.ExpertParallelMoE(NUM_EXPERTS, HIDDEN, INTERMEDIATE)
    problem = routed_tokens(seed=1, num_tokens=8)
    before = layer(*problem)
    with torch.no_grad():
        layer.down.mul_(2)
    assert torch.equal(layer(*problem), before)  # the FP8 copies are still the old ones
    layer.quantize_weights()
    assert fgemm.calc_diff(layer(*problem), 2 * before.float()) < 1e-5


def test_bad_arguments_raise_errors_naming_them(one_rank_group):
    with pytest.raises(ValueError, match="'num_experts' expected a positive int, got 0"):
        fgemm.moe.ExpertParallelMoE(0, HIDDEN, INTERMEDIATE)
    with pytest.raises(TypeError, match="'decode_max_tokens' expected an int, got float"):
        fgemm.moe.ExpertParallelMoE(NUM_EXPERTS, HIDDEN, INTERMEDIATE, decode_max_tokens=2.0)
    layer = fgemm.moe.ExpertParallelMoE(NUM_EXPERTS, HIDDEN, INTERMEDIATE, decode_max_tokens=4)
    tokens, topk_ids, topk_weights = routed_tokens(seed=1, num_tokens=6)
    with pytest.raises(TypeError, match="'topk_ids' expected dtype int32 or int64, got torch.float32"):
        layer(tokens, topk_ids.float(), topk_weights)
    with pytest.raises(ValueError, match=rf"'topk_ids' expected values in \[0, {NUM_EXPERTS}\), got values in"):
        layer(tokens, topk_ids + NUM_EXPERTS, topk_weights)
    with pytest.raises(ValueError, match=r"'topk_weights' expected shape \[6, 3\]"):
        layer(tokens, topk_ids, topk_weights[:, :2])
    with pytest.raises(ValueError, match=rf"'tokens' expected shape \[T, {HIDDEN}\]"):
        layer(tokens[:, :128], topk_ids, topk_weights)
    with pytest.raises(ValueError, match="'mode' expected 'prefill' or 'decode', got 'train'"):
        layer(tokens, topk_ids, topk_weights, mode="train")
    with pytest.raises(ValueError, match="at most decode_max_tokens=4 rows in mode='decode', got 6"):
        layer(tokens, topk_ids, topk_weights, mode="decode")
    layer.set_decode_capacity(8)
    assert layer(tokens, topk_ids, topk_weights, mode="decode").shape == tokens.shape
    with pytest.raises(ValueError, match=r"'down' expected shape \[8, 256, 128\]"):
        layer.load_expert_weights(*expert_weights(seed=0)[:1], torch.zeros(8, 256, 64))
