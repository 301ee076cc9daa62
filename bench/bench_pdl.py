"""GPU benchmark of programmatic dependent launch (fgemm.set_pdl): chains of dependent decode GEMMs replayed from
a CUDA graph, with it off and on.

    python bench/bench_pdl.py [--json out.json] [--links 8]

Rows: M in {1, 16, 64, 128} times
  fp8   D_i = A B_i^T + D_(i-1), FP32 out (each GEMM reads the previous one's output as C), (N, K) in
        {(2112, 7168), (7168, 2048), (4096, 7168)}: the decode seed shapes;
  bf16  x_i = x_(i-1) W_i^T, BF16 (each GEMM reads the previous one's output as A), W square, K in
        {2048, 4096, 7168};
  quant x_i = per_token_cast_to_fp8(x_(i-1)) W_i^T, BF16, W square in FP8 per 128 x 128, K in {2048, 7168}: a
        quantizer before each GEMM, reading the previous GEMM's output, as an FP8 decode layer runs.
Each chain of --links GEMMs (every weight its own tensor, so that they come from DRAM) is captured once per
setting into a CUDA graph. Columns: the time of a replay from its start to its end on the GPU (CUDA events around
it, after an 8 GB buffer is zeroed and the GPU has gone idle), per GEMM (for quant: per quantizer and GEMM),
medians over alternating rounds of the two settings; PDL shortens the gaps between the kernels, which the
profiler's kernel times do not show.
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

import torch

import fgemm
from fgemm.bench.gpu_timing import rested_flush_buffer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gpu import geomean  # noqa: E402

ROUNDS = 15


def fp8_chain(m, n, k, links, gen):
    a = fgemm.per_token_cast_to_fp8(torch.randn(m, k, device="cuda", generator=gen))
    weights = [fgemm.per_block_cast_to_fp8(torch.randn(n, k, device="cuda", generator=gen)) for _ in range(links)]
    outputs = [torch.randn(m, n, device="cuda", generator=gen)] + [
        torch.empty(m, n, device="cuda") for _ in range(links)]

    def run():
        for i, b in enumerate(weights):
            fgemm.fp8_gemm_nt(a, b, outputs[i + 1], c=outputs[i])
    return run


def bf16_chain(m, k, links, gen):
    outputs = [torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)] + [
        torch.empty(m, k, dtype=torch.bfloat16, device="cuda") for _ in range(links)]
    weights = [(torch.randn(k, k, device="cuda", generator=gen) / k ** 0.5).to(torch.bfloat16) for _ in range(links)]

    def run():
        for i, w in enumerate(weights):
            fgemm.bf16_gemm_nt(outputs[i], w, outputs[i + 1])
    return run


def quantized_chain(m, k, links, gen):
    outputs = [torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)] + [
        torch.empty(m, k, dtype=torch.bfloat16, device="cuda") for _ in range(links)]
    weights = [fgemm.per_block_cast_to_fp8(torch.randn(k, k, device="cuda", generator=gen) / k ** 0.5)
               for _ in range(links)]

    def run():
        for i, w in enumerate(weights):
            fgemm.fp8_gemm_nt(fgemm.per_token_cast_to_fp8(outputs[i]), w, outputs[i + 1])
    return run


def captured(run, pdl):
    fgemm.set_pdl(pdl)
    try:
        run()  # compiles outside the capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            run()
    finally:
        fgemm.set_pdl(False)
    return graph


def replay_times_us(graphs, flush):
    """Median time of each graph's replay, the graphs alternating in rounds, each after a flush and an idle GPU."""
    samples = [[] for _ in graphs]
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(ROUNDS):
        for i, graph in enumerate(graphs):
            flush.zero_()
            torch.cuda.synchronize()
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            samples[i].append(start.elapsed_time(end) * 1e3)
    return [statistics.median(s) for s in samples]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", help="write the rows to this file")
    parser.add_argument("--links", type=int, default=8, help="GEMMs per chain")
    args = parser.parse_args()
    flush = rested_flush_buffer()
    gen = torch.Generator(device="cuda").manual_seed(0)
    chains = [(f"fp8 {m}x{n}x{k}", lambda m=m, n=n, k=k: fp8_chain(m, n, k, args.links, gen))
              for m in (1, 16, 64, 128) for n, k in ((2112, 7168), (7168, 2048), (4096, 7168))]
    chains += [(f"bf16 {m}x{k}x{k}", lambda m=m, k=k: bf16_chain(m, k, args.links, gen))
               for m in (1, 16, 64, 128) for k in (2048, 4096, 7168)]
    chains += [(f"quant {m}x{k}x{k}", lambda m=m, k=k: quantized_chain(m, k, args.links, gen))
               for m in (1, 16, 64, 128) for k in (2048, 7168)]
    rows = []
    print("| chain | off µs per GEMM | on µs per GEMM | off / on |")
    print("| --- | ---: | ---: | ---: |")
    for name, make in chains:
        run = make()
        off, on = replay_times_us([captured(run, False), captured(run, True)], flush)
        row = {"chain": name, "links": args.links, "off_us": off / args.links, "on_us": on / args.links,
               "speedup": off / on}
        rows.append(row)
        print(f"| {name} | {row['off_us']:.2f} | {row['on_us']:.2f} | {row['speedup']:.3f} |", flush=True)
    print(f"geomean off / on: {geomean([r['speedup'] for r in rows]):.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"gpu": torch.cuda.get_device_name(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
