"""Benchmark of fgemm.moe.ExpertParallelMoE on the GPUs of one machine, with DeepSeek-V3's routed experts:
hidden 7168, expert intermediate 2048, 256 experts split over the ranks, top-8 of uniformly random scores.

Starts one process per GPU itself (NCCL, NVLink multicast off). For prefill (--prefill-tokens per rank) and
for decode (each of --decode-tokens per rank) it times the layer's three steps, dispatch, experts and combine,
with CUDA events on the current stream around each (median of --repeats calls, after warm-up, the slowest
rank's median), and decode also as a whole CUDA-graph replay. The baseline is the same layer with BF16 experts
computed by torch: one torch.matmul per expert and projection on the contiguous layout (prefill), torch.bmm
over the masked layout's fixed buffer (decode), on the BF16 master weights and the dequantized tokens; its
dispatch and combine are the layer's own. Tokens per second count the tokens of all ranks. "bare a2a" is one
all_to_all_single of the dispatch's bytes alone, and "GB/s off GPU" the rate at which it sends the part of
them bound for other GPUs: what the link gives the dispatch.

    python bench/bench_moe.py [--gpus 2] [--prefill-tokens 4096] [--decode-tokens 1,16,64,128]
                              [--decode-capacity auto|tokens|N] [--repeats 20] [--json moe.json]
"""

import argparse
import datetime
import json
import socket
import statistics
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

import fgemm
from fgemm.moe import ExpertParallelMoE, disable_multicast
from fgemm.quantize import per_token_dequantize

NUM_EXPERTS, HIDDEN, INTERMEDIATE, TOP_K = 256, 7168, 2048, 8
WARMUP = 3


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpus", type=int, default=2, help="ranks, one per GPU (default 2)")
    parser.add_argument("--prefill-tokens", type=int, default=4096, help="tokens per rank in prefill (0: none)")
    parser.add_argument("--decode-tokens", default="1,16,64,128", help="tokens per rank in decode, comma-separated")
    parser.add_argument("--decode-capacity", default="auto",
                        help="max_tokens_per_expert in decode: 'auto' (default: twice the pairs an expert gets "
                             "from a rank on average, plus 8, at most the tokens), 'tokens' (the tokens per rank, "
                             "which no routing exceeds) or a number")
    parser.add_argument("--repeats", type=int, default=20, help="timed calls per measurement (default 20)")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    args.decode_tokens = [int(t) for t in args.decode_tokens.split(",") if t]
    return args


def decode_capacity(choice, tokens_per_rank):
    """max_tokens_per_expert for --decode-capacity. 'auto' is far above what uniform routing gives any expert
    (a binomial of mean T * k / E), and a fraction of the worst case: the fixed exchange moves E * capacity
    rows per rank whatever the routing."""
    if choice == "tokens":
        return tokens_per_rank
    if choice == "auto":
        return min(tokens_per_rank, 2 * fgemm.ceil_div(tokens_per_rank * TOP_K, NUM_EXPERTS) + 8)
    return int(choice)


def routing(num_tokens, device, seed):
    """tokens [T, H] BF16, top-8 experts of uniformly random scores, their softmax weights."""
    generator = torch.Generator(device=device).manual_seed(seed)
    tokens = torch.randn(num_tokens, HIDDEN, device=device, generator=generator).bfloat16()
    scores = torch.rand(num_tokens, NUM_EXPERTS, device=device, generator=generator)
    topk_weights, topk_ids = scores.topk(TOP_K, dim=-1)
    return tokens, topk_ids, topk_weights.softmax(-1)


def bf16_expert(x, gate_up, down):
    """One expert (or a batch of experts, with torch.bmm's leading dimension) in BF16 with torch."""
    multiply = torch.bmm if x.dim() == 3 else torch.matmul
    gate, up = multiply(x, gate_up.transpose(-1, -2)).chunk(2, dim=-1)
    return multiply(F.silu(gate) * up, down.transpose(-1, -2))


def bf16_experts(layer, dispatched):
    """The baseline's experts on what the layer dispatched, in the layer's output layout."""
    codes, scales = dispatched.tokens
    x = per_token_dequantize(codes, scales, torch.bfloat16)
    if codes.dim() == 3:  # decode: the masked layout's fixed buffer, every row
        return bf16_expert(x, layer.gate_up, layer.down)
    out = torch.zeros(x.shape[0], HIDDEN, dtype=torch.bfloat16, device=x.device)
    for expert, (start, rows) in enumerate(contiguous_segments(dispatched.m_indices, layer.local_experts)):
        if rows:
            out[start:start + rows] = bf16_expert(x[start:start + rows], layer.gate_up[expert], layer.down[expert])
    return out


def contiguous_segments(m_indices, local_experts):
    """(first row, real rows) of each local expert in the contiguous layout, read on the host (as a loop of
    torch calls per expert must)."""
    counts = torch.zeros(local_experts + 1, dtype=torch.int64, device=m_indices.device)
    counts.scatter_add_(0, m_indices.long() + 1, torch.ones_like(m_indices, dtype=torch.int64))
    rows = counts[1:].tolist()
    alignment = fgemm.get_m_alignment_for_contiguous_layout()
    starts, start = [], 0
    for count in rows:
        starts.append(start)
        start += -(-count // alignment) * alignment
    return list(zip(starts, rows))


def time_steps(layer, inputs, mode, experts, repeats):
    """Median milliseconds of dispatch, experts, combine and the three together (eager, so with the host reads
    of prefill and of the checks), and the rows the experts computed."""
    tokens, topk_ids, topk_weights = inputs
    times = {"dispatch": [], "experts": [], "combine": [], "layer": []}
    for call in range(WARMUP + repeats):
        dist.barrier()
        torch.cuda.synchronize()
        events = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        events[0].record()
        dispatched = layer.dispatch(tokens, topk_ids, topk_weights, mode=mode)
        events[1].record()
        outputs = experts(layer, dispatched)
        events[2].record()
        layer.combine(outputs, dispatched, topk_weights, tokens.dtype)
        events[3].record()
        torch.cuda.synchronize()
        if call >= WARMUP:
            for step, (begin, end) in zip(times, ((0, 1), (1, 2), (2, 3), (0, 3))):
                times[step].append(events[begin].elapsed_time(events[end]))
    rows = int(dispatched.m_indices.ge(0).sum()) if mode == "prefill" else int(dispatched.masked_m.sum())
    return {step: statistics.median(samples) for step, samples in times.items()}, rows


def time_graph(layer, inputs, experts, repeats):
    """Median milliseconds of a CUDA-graph replay of the whole decode layer."""
    tokens, topk_ids, topk_weights = inputs

    def step():
        dispatched = layer.dispatch(tokens, topk_ids, topk_weights, mode="decode")
        return layer.combine(experts(layer, dispatched), dispatched, topk_weights, tokens.dtype)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(WARMUP):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, capture_error_mode="thread_local"):
        step()
    milliseconds = median_ms(graph.replay, repeats)
    layer.check_capacity()
    del graph
    return milliseconds


def time_exchange(nbytes, world, device, repeats):
    """Median milliseconds of one bare all_to_all_single that sends nbytes from every rank in equal parts: what
    the link and NCCL give the dispatch's volume, without the layer's own work around the exchange."""
    send = torch.zeros(nbytes // world * world, dtype=torch.uint8, device=device)
    receive = torch.empty_like(send)
    return median_ms(lambda: dist.all_to_all_single(receive, send), repeats)


def median_ms(run, repeats):
    """Median milliseconds of run() between CUDA events, every rank starting each call together, after warm-up."""
    samples = []
    for call in range(WARMUP + repeats):
        dist.barrier()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        torch.cuda.synchronize()
        if call >= WARMUP:
            samples.append(start.elapsed_time(end))
    return statistics.median(samples)


def fgemm_experts(layer, dispatched):
    return layer.run_experts(dispatched)


def slowest(values, group_size):
    """The largest of every rank's value (None stays None)."""
    every_rank = [None] * group_size
    dist.all_gather_object(every_rank, values)
    return {key: None if values[key] is None else max(rank[key] for rank in every_rank) for key in values}


def measure(layer, mode, tokens_per_rank, args, world, rank):
    inputs = routing(tokens_per_rank, torch.device("cuda", rank), seed=1000 + rank)
    rows = {}
    for name, experts in (("fgemm", fgemm_experts), ("bf16", bf16_experts)):
        steps, expert_rows = time_steps(layer, inputs, mode, experts, args.repeats)
        if mode == "decode":
            steps["graph"] = time_graph(layer, inputs, experts, args.repeats)
        steps = slowest(steps, world)
        whole = steps.get("graph") or steps["layer"]
        rows[name] = dict(steps, tokens_per_s=tokens_per_rank * world / (whole * 1e-3),
                          expert_tflops=6 * HIDDEN * INTERMEDIATE * expert_rows / (steps["experts"] * 1e-3) / 1e12)
    hidden_scale_bytes = HIDDEN + 4 * fgemm.ceil_div(HIDDEN, 128)
    if mode == "prefill":
        sent = tokens_per_rank * TOP_K
        dispatch_bytes, combine_bytes = sent * hidden_scale_bytes, sent * 2 * HIDDEN
    else:
        slots = NUM_EXPERTS * layer.max_tokens_per_expert
        dispatch_bytes, combine_bytes = slots * hidden_scale_bytes, slots * 2 * HIDDEN
    exchange = slowest({"ms": time_exchange(dispatch_bytes, world, inputs[0].device, args.repeats)}, world)["ms"]
    return {"mode": mode, "tokens_per_rank": tokens_per_rank, "ranks": world,
            "capacity": layer.max_tokens_per_expert if mode == "decode" else None,
            "dispatch_bytes_per_rank": dispatch_bytes, "combine_bytes_per_rank": combine_bytes,
            "bare_exchange_ms": exchange,
            "bare_exchange_gbps": dispatch_bytes * (world - 1) / world / (exchange * 1e-3) / 1e9,
            "fgemm": rows["fgemm"], "bf16": rows["bf16"]}


def worker(rank, world, port, args, queue):
    disable_multicast()
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=600), device_id=torch.device("cuda", rank))
    torch.manual_seed(rank)
    layer = ExpertParallelMoE(NUM_EXPERTS, HIDDEN, INTERMEDIATE, device="cuda")
    results = []
    if args.prefill_tokens:
        results.append(measure(layer, "prefill", args.prefill_tokens, args, world, rank))
    for tokens in args.decode_tokens:
        layer.set_decode_capacity(tokens, decode_capacity(args.decode_capacity, tokens))
        results.append(measure(layer, "decode", tokens, args, world, rank))
    if rank == 0:
        queue.put(results)
    dist.barrier()
    dist.destroy_process_group()


def fmt(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"


def print_table(results, device_name):
    print(f"ExpertParallelMoE on {results[0]['ranks']} x {device_name}: hidden {HIDDEN}, intermediate "
          f"{INTERMEDIATE}, {NUM_EXPERTS} experts, top-{TOP_K}; ms, median, slowest rank")
    header = ("mode", "tok/rank", "capacity", "MB out/rank", "bare a2a", "GB/s off GPU", "dispatch", "experts",
              "combine", "layer", "graph",
              "TFLOPS exp", "tok/s", "bf16 experts", "bf16 layer", "bf16 graph", "bf16 tok/s", "speed-up")
    print(" | ".join(header))
    for row in results:
        ours, base = row["fgemm"], row["bf16"]
        whole, base_whole = ours.get("graph") or ours["layer"], base.get("graph") or base["layer"]
        print(" | ".join([
            row["mode"], str(row["tokens_per_rank"]), str(row["capacity"] or "-"),
            f"{row['dispatch_bytes_per_rank'] / 1e6:.1f}", fmt(row["bare_exchange_ms"]),
            f"{row['bare_exchange_gbps']:.0f}",
            fmt(ours["dispatch"]), fmt(ours["experts"]), fmt(ours["combine"]), fmt(ours["layer"]),
            fmt(ours.get("graph")), fmt(ours["expert_tflops"], 1), f"{ours['tokens_per_s']:.0f}",
            fmt(base["experts"]), fmt(base["layer"]), fmt(base.get("graph")), f"{base['tokens_per_s']:.0f}",
            f"{base_whole / whole:.2f}x"]))


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main(argv=None):
    args = parse_args(argv)
    if torch.cuda.device_count() < args.gpus:
        sys.exit(f"bench_moe.py: needs {args.gpus} CUDA devices, torch sees {torch.cuda.device_count()}")
    disable_multicast()  # in the ranks' inherited environment too
    queue = mp.get_context("spawn").SimpleQueue()
    mp.spawn(worker, args=(args.gpus, free_port(), args, queue), nprocs=args.gpus)
    results = queue.get()
    print_table(results, torch.cuda.get_device_name(0))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"device": torch.cuda.get_device_name(0), "results": results}, out, indent=1)


if __name__ == "__main__":
    main()
