"""What each rank of the expert-parallel tests runs (test_moe.py on the CPU with gloo, test_gpu_moe.py on two
GPUs with NCCL), and the launcher that starts the ranks as processes and bounds their time.

Every rank builds the same problem from one seed (routing with uneven loads and idle experts), runs its share
of the tokens through ExpertParallelMoE and compares the result with ReferenceMoE's for the same tokens.
"""

import datetime
import multiprocessing
import os
import socket
import time

import torch
import torch.distributed as dist

import fgemm
from fgemm.moe import ExpertParallelMoE, ReferenceMoE, disable_multicast

NUM_EXPERTS, HIDDEN, INTERMEDIATE, TOP_K = 8, 256, 128, 3
IDLE_EXPERTS = (2, 5)  # receive no tokens: one on each rank when two ranks share the experts
TOKENS_PER_RANK = (40, 23)  # uneven, and rank 1's is no multiple of anything


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def init_group(rank: int, world: int, port: int, backend: str, timeout_s: float) -> None:
    disable_multicast()
    if backend == "nccl":
        torch.cuda.set_device(rank)
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=timeout_s))


def expert_weights(seed: int):
    """gate_up [E, 2I, H] and down [E, H, I], BF16."""
    generator = torch.Generator().manual_seed(seed)
    gate_up = torch.randn(NUM_EXPERTS, 2 * INTERMEDIATE, HIDDEN, generator=generator) / HIDDEN ** 0.5
    down = torch.randn(NUM_EXPERTS, HIDDEN, INTERMEDIATE, generator=generator) / INTERMEDIATE ** 0.5
    return gate_up.bfloat16(), down.bfloat16()


def routed_tokens(seed: int, num_tokens: int, id_dtype=torch.int64):
    """tokens [T, H] BF16, topk_ids [T, k] (distinct experts per token, skewed towards expert 0 and never the
    idle ones), topk_weights [T, k] FP32 summing to 1 per token."""
    generator = torch.Generator().manual_seed(seed)
    tokens = torch.randn(num_tokens, HIDDEN, generator=generator).bfloat16()
    popularity = torch.rand(NUM_EXPERTS, generator=generator) + 0.1
    popularity[0] = 4.0
    popularity[list(IDLE_EXPERTS)] = 0.0
    topk_ids = torch.multinomial(popularity.expand(num_tokens, -1), TOP_K, generator=generator)
    topk_weights = torch.rand(num_tokens, TOP_K, generator=generator).softmax(-1)
    return tokens, topk_ids.to(id_dtype), topk_weights


def my_share(rank: int, tensors):
    start = sum(TOKENS_PER_RANK[:rank])
    return [t[start:start + TOKENS_PER_RANK[rank]] for t in tensors]


def assert_same(actual: torch.Tensor, expected: torch.Tensor, exact: bool, what: str) -> None:
    """On the CPU the layer and the reference do the same arithmetic on each row (fgemm's CPU GEMMs give a
    row the same bits whatever the layout and the rows around it): equal bits. On the GPU the kernels' tiles
    depend on the number of rows, so the BF16 roundings of the two may differ: calc_diff < 1e-4, ten times
    below the recipe's own error."""
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, what
    if exact or actual.numel() == 0:  # (calc_diff of nothing is 0 / 0)
        assert torch.equal(actual, expected), f"{what}: {(actual != expected).sum()} elements differ"
    else:
        diff = fgemm.calc_diff(actual, expected)
        assert diff < 1e-4, f"{what}: calc_diff {diff}"


def compare_with_reference(rank: int, world: int, port: int, backend: str) -> None:
    """Prefill and decode, int64 and int32 ids, against ReferenceMoE; then decode with too small a capacity."""
    init_group(rank, world, port, backend, timeout_s=60)
    device = torch.device("cuda", rank) if backend == "nccl" else torch.device("cpu")
    exact = device.type == "cpu"
    gate_up, down = (w.to(device) for w in expert_weights(seed=0))
    layer = ExpertParallelMoE(NUM_EXPERTS, HIDDEN, INTERMEDIATE, decode_max_tokens=max(TOKENS_PER_RANK),
                              device=device)
    layer.load_expert_weights(gate_up, down)
    reference = ReferenceMoE(gate_up, down)
    for seed, id_dtype in ((1, torch.int64), (2, torch.int32)):
        problem = [t.to(device) for t in routed_tokens(seed, sum(TOKENS_PER_RANK), id_dtype)]
        load = torch.bincount(problem[1].flatten().long().cpu(), minlength=NUM_EXPERTS)
        assert (load[list(IDLE_EXPERTS)] == 0).all() and load.max() > 2 * load[load > 0].min(), load  # the premise
        expected = my_share(rank, [reference(*problem)])[0]
        mine = my_share(rank, problem)
        assert_same(layer(*mine, mode="prefill"), expected, exact, f"rank {rank} prefill, {id_dtype}")
        assert_same(layer(*mine, mode="decode"), expected, exact, f"rank {rank} decode, {id_dtype}")
    # Rank 1 has no tokens at all: it still takes part in every exchange, and serves rank 0's.
    problem = [t.to(device) for t in routed_tokens(5, TOKENS_PER_RANK[0])]
    expected = reference(*problem)[:TOKENS_PER_RANK[0] if rank == 0 else 0]
    mine = [t[:expected.shape[0]] for t in problem]
    for mode in ("prefill", "decode"):
        assert_same(layer(*mine, mode=mode), expected, exact, f"rank {rank} {mode}, rank 1 without tokens")

    # Every token to experts 0, 1, 3: expert 0 gets more pairs from each rank than a capacity of 4.
    small = ExpertParallelMoE(NUM_EXPERTS, HIDDEN, INTERMEDIATE, decode_max_tokens=max(TOKENS_PER_RANK),
                              max_tokens_per_expert=4, device=device)
    tokens, _, topk_weights = my_share(rank, [t.to(device) for t in routed_tokens(3, sum(TOKENS_PER_RANK))])
    crowded = torch.tensor([0, 1, 3], device=device).expand(tokens.shape[0], -1)
    try:
        small(tokens, crowded, topk_weights, mode="decode")
    except RuntimeError as error:
        assert "max_tokens_per_expert=4" in str(error), error
    else:
        raise AssertionError(f"rank {rank}: decode beyond max_tokens_per_expert did not raise")

    try:
        small.set_decode_capacity(8 + rank)
    except ValueError as error:
        assert "every rank must give the layer the same" in str(error), error
    else:
        raise AssertionError(f"rank {rank}: ranks with different decode capacities went unnoticed")
    dist.destroy_process_group()


def fail_on_rank_one(rank: int, world: int, port: int, backend: str, timeout_s: float, messages,
                     rank_zero_ready) -> None:
    """Rank 1 dies before the layer's first exchange; rank 0 must end with an error, not wait forever."""
    init_group(rank, world, port, backend, timeout_s)
    device = torch.device("cuda", rank) if backend == "nccl" else torch.device("cpu")
    layer = ExpertParallelMoE(NUM_EXPERTS, HIDDEN, INTERMEDIATE, device=device)
    if rank == 1:
        # Once rank 0 has finished construction's exchange (which may still read from this rank when this
        # rank's part is done), as a crash would: no cleanup, no goodbye to the peers.
        rank_zero_ready.wait()
        os._exit(3)
    rank_zero_ready.set()
    tokens, topk_ids, topk_weights = (t.to(device) for t in routed_tokens(4, TOKENS_PER_RANK[0]))
    try:
        layer(tokens, topk_ids, topk_weights)
    except RuntimeError as error:
        messages.put(str(error))
        messages.close()
        messages.join_thread()
        # At once: an orderly exit would wait for the communication that never completes.
        os._exit(1)


def _entry(function, rank, world, args):
    function(rank, world, *args)


def run_ranks(function, world: int, args: tuple, deadline_s: float):
    """Runs function(rank, world, *args) in `world` spawned processes; returns their exit codes, in rank order, and
    the seconds they took. Processes still running after deadline_s are killed and counted as a failure of
    the bound (exit code None)."""
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_entry, args=(function, rank, world, args)) for rank in range(world)]
    start = time.monotonic()
    for process in processes:
        process.start()
    for process in processes:
        process.join(max(0.0, deadline_s - (time.monotonic() - start)))
    codes = [process.exitcode for process in processes]
    for process in processes:
        if process.is_alive():
            process.kill()
            process.join()
    return codes, time.monotonic() - start


def replay_decode_graph(rank: int, world: int, port: int) -> None:
    """Captures decode (dispatch, experts, combine) in one CUDA graph on GPU `rank`, then replays it with new
    tokens and routings copied into its static inputs, each replay against the reference."""
    init_group(rank, world, port, "nccl", timeout_s=60)
    device = torch.device("cuda", rank)
    gate_up, down = (w.to(device) for w in expert_weights(seed=0))
    layer = ExpertParallelMoE(NUM_EXPERTS, HIDDEN, INTERMEDIATE, decode_max_tokens=max(TOKENS_PER_RANK),
                              device=device)
    layer.load_expert_weights(gate_up, down)
    reference = ReferenceMoE(gate_up, down)
    static = [t.to(device) for t in my_share(rank, routed_tokens(10, sum(TOKENS_PER_RANK)))]
    # Warm up on a side stream, as torch.cuda.graphs asks: the kernels are compiled and NCCL's communicator
    # is set up before the capture.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            layer(*static, mode="decode")
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    # thread_local: NCCL's watchdog thread polls events while this thread captures.
    with torch.cuda.graph(graph, capture_error_mode="thread_local"):
        output = layer(*static, mode="decode")
    for seed in (11, 12, 13):
        problem = [t.to(device) for t in routed_tokens(seed, sum(TOKENS_PER_RANK))]
        for buffer, value in zip(static, my_share(rank, problem)):
            buffer.copy_(value)
        graph.replay()
        torch.cuda.synchronize()
        layer.check_capacity()
        assert_same(output, my_share(rank, [reference(*problem)])[0], exact=False, what=f"rank {rank} replay {seed}")
    # The graph holds the NCCL work it captured: destroying the process group before the graph waits forever.
    del graph
    dist.destroy_process_group()
