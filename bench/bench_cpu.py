"""CPU benchmark: fgemm's CPU backend against "dequantise to FP32 + torch.matmul" on the seed shapes.

Shapes: M in {64, 128, 1024} times each (N, K) of the seed shape table with K <= 7168. Both sides take the
same FP8 operands and scales and write a BF16 D; the torch side's time includes the dequantisation. Prints
the median of several runs per shape, the GFLOPS, the ratio (torch time / fgemm time) and their geometric
mean; --json writes the numbers. --overhead instead measures the host cost of one call from Python
(argument reading and checking, no arithmetic: M = 0).

    python bench/bench_cpu.py [--shapes ../shared/bench/seed_shapes.json] [--json out.json] [--overhead]
"""

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import time
import timeit
from pathlib import Path

import torch

import fgemm
from fgemm.quantize import per_block_dequantize, per_token_dequantize

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SHAPES = REPO.parent / "shared" / "bench" / "seed_shapes.json"
MAX_K = 7168


def seed_nk_pairs(path):
    """The distinct (N, K) of every layout in the seed table, K <= 7168, in the table's order."""
    table = json.loads(Path(path).read_text())
    pairs = []
    for entries in table.values():
        if isinstance(entries, list):
            for entry in entries:
                pair = (entry["n"], entry["k"])
                if entry["k"] <= MAX_K and pair not in pairs:
                    pairs.append(pair)
    return pairs


def median_ms(fn, runs):
    fn()  # warm-up: starts the thread pools, touches the memory
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def bench_shape(m, n, k, runs):
    gen = torch.Generator().manual_seed(0)
    a, sfa = fgemm.per_token_cast_to_fp8(torch.randn(m, k, generator=gen))
    b, sfb = fgemm.per_block_cast_to_fp8(torch.randn(n, k, generator=gen))
    d = torch.empty(m, n, dtype=torch.bfloat16)

    def run_fgemm():
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)

    def run_torch():
        return (per_token_dequantize(a, sfa) @ per_block_dequantize(b, sfb).T).to(torch.bfloat16)

    fgemm_ms = median_ms(run_fgemm, runs)
    torch_ms = median_ms(run_torch, runs)
    return dict(m=m, n=n, k=k, fgemm_ms=fgemm_ms, fgemm_gflops=2 * m * n * k / fgemm_ms / 1e6, torch_ms=torch_ms,
                ratio=torch_ms / fgemm_ms, calc_diff=fgemm.calc_diff(d, run_torch()))


def call_overhead_us():
    """Microseconds per call of each GEMM from Python with M = 0: the arguments are read and checked in
    full, then nothing is left to compute. Best of 5 repeats of 20000 calls."""
    fp8 = torch.float8_e4m3fn
    lhs = (torch.empty(0, 512, dtype=fp8), torch.empty(0, 4))
    rhs = (torch.empty(1024, 512, dtype=fp8), torch.empty(8, 4))
    grouped_lhs = (torch.empty(4, 0, 512, dtype=fp8), torch.empty(4, 0, 4))
    grouped_rhs = (torch.empty(4, 1024, 512, dtype=fp8), torch.empty(4, 8, 4))
    d, grouped_d = torch.empty(0, 1024), torch.empty(4, 0, 1024)
    m_indices, masked_m = torch.empty(0, dtype=torch.int32), torch.zeros(4, dtype=torch.int32)
    calls = {
        "fp8_gemm_nt": lambda: fgemm.fp8_gemm_nt(lhs, rhs, d),
        "m_grouped_fp8_gemm_nt_contiguous":
            lambda: fgemm.m_grouped_fp8_gemm_nt_contiguous(lhs, grouped_rhs, d, m_indices),
        "m_grouped_fp8_gemm_nt_masked":
            lambda: fgemm.m_grouped_fp8_gemm_nt_masked(grouped_lhs, grouped_rhs, grouped_d, masked_m, 1),
    }
    return {name: min(timeit.repeat(call, number=20000, repeat=5)) / 20000 * 1e6 for name, call in calls.items()}


def cpu_model():
    fields = {}
    if Path("/proc/cpuinfo").exists():
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    if "model name" not in fields:
        return platform.processor() or "unknown"
    return f"{fields['model name']} (family {fields.get('cpu family', '?')}, model {fields.get('model', '?')})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default=str(DEFAULT_SHAPES), help="the seed shape table (JSON)")
    parser.add_argument("--ms", default="64,128,1024", help="the values of M (comma-separated)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per shape and side (default: 5)")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--overhead", action="store_true", help="measure the host cost of a call instead")
    args = parser.parse_args()
    if args.overhead:
        for name, microseconds in call_overhead_us().items():
            print(f"{name}: {microseconds:.2f} us per call from Python (M = 0: arguments read and checked)")
        return

    isa, threads = fgemm._C.cpu_backend()
    machine = dict(cpu=cpu_model(), cores=os.cpu_count(), fgemm_isa=isa, fgemm_threads=threads,
                   torch_threads=torch.get_num_threads(), torch=torch.__version__,
                   date=datetime.date.today().isoformat())
    print(f"{machine['cpu']}, {machine['cores']} cores; fgemm {isa} x {threads} threads, "
          f"torch {machine['torch']} x {machine['torch_threads']} threads")
    print(f"{'M':>5} {'N':>6} {'K':>5} | {'fgemm ms':>9} {'GFLOPS':>7} | {'torch ms':>9} | {'ratio':>5} | calc_diff")
    rows = []
    for n, k in seed_nk_pairs(args.shapes):
        for m in map(int, args.ms.split(",")):
            row = bench_shape(m, n, k, args.runs)
            rows.append(row)
            print(f"{m:>5} {n:>6} {k:>5} | {row['fgemm_ms']:9.2f} {row['fgemm_gflops']:7.1f} | "
                  f"{row['torch_ms']:9.2f} | {row['ratio']:5.2f} | {row['calc_diff']:.1e}", flush=True)
    geomean = math.exp(statistics.mean(math.log(row["ratio"]) for row in rows))
    print(f"geometric mean of the ratio (torch time / fgemm time): {geomean:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(machine=machine, rows=rows, geomean_ratio=geomean), indent=1))


if __name__ == "__main__":
    main()
