"""CPU benchmark: fgemm's CPU backend against dequantising the FP8 (or INT8) operands and calling torch.matmul.

Shapes: M in {1, 64, 128, 1024} times each (N, K) of the seed shape table with K <= 7168. Every side takes the
same FP8 operands and scales and writes a BF16 D. The two alternatives dequantise A and B with torch operations
(E4M3 to the dtype, times the scales) on every call, inside their time: "fp32" dequantises to FP32 and
multiplies in FP32, then rounds D to BF16; "bf16" dequantises to BF16 (scales rounded to BF16) and multiplies in
BF16. Prints the median of several runs per shape (the three sides taking turns, torch with
OMP_WAIT_POLICY=PASSIVE unless it is set: see the note at the import of torch), fgemm's GFLOPS, the ratio (the
faster alternative's time / fgemm's time) and its geometric mean; --json writes the numbers. --overhead instead
measures the host cost of one call from Python (argument reading and checking, no arithmetic: M = 0).
--kind int8 times W8A8 instead (`int8_gemm_nt` with per-token scales sa [M] and per-channel sb [N], BF16 D; issue
26's CPU target is 2x the faster alternative at M >= 128) against dequantising the INT8 operands to FP32 or BF16
and torch.matmul; its calc_diff is against float64 of the dequantised operands.

    python bench/bench_cpu.py [--shapes seed|FILE.json] [--kind fp8|int8] [--json out.json] [--overhead]
"""

import argparse
import datetime
import json
import math
import os
import statistics
import timeit
from pathlib import Path

# torch's OpenMP threads must sleep at once after each operation (fgemm.bench.cpu_timing's
# prefer_passive_omp_wait says why); the policy is read when torch starts OpenMP, so it is set before the import.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

import fgemm  # noqa: E402
from fgemm.bench import tables  # noqa: E402
from fgemm.bench.baselines import dequantize_int8_matmul_bf16_out, dequantize_matmul_bf16_out  # noqa: E402
from fgemm.bench.cpu_timing import median_ms  # noqa: E402
from fgemm.bench.machine import cpu_model  # noqa: E402
from fgemm.bench.operations import normal_gemm  # noqa: E402

MAX_K = 7168


def seed_nk_pairs(table_name):
    """The distinct (N, K) of every GEMM layout in the table, K <= 7168, in the table's order."""
    pairs = []
    for entries in tables.load_table(table_name).values():
        if isinstance(entries, list):
            for entry in entries:
                pair = (entry.get("n"), entry.get("k"))
                if "n" in entry and entry["k"] <= MAX_K and pair not in pairs:
                    pairs.append(pair)
    return pairs


def timed_row(m, n, k, runs, run_fgemm, run_fp32, run_bf16):
    """One shape's row: the three sides' median times, fgemm's GFLOPS and the ratio to the faster alternative."""
    fgemm_ms, fp32_ms, bf16_ms = median_ms([run_fgemm, run_fp32, run_bf16], runs)
    return dict(m=m, n=n, k=k, fgemm_ms=fgemm_ms, fp32_ms=fp32_ms, bf16_ms=bf16_ms,
                fgemm_gflops=2 * m * n * k / fgemm_ms / 1e6, ratio=min(fp32_ms, bf16_ms) / fgemm_ms)


def bench_shape(m, n, k, runs):
    (a, sfa), (b, sfb), d, run_fgemm = normal_gemm(m, n, k, "cpu", sfa_mn_major=False)
    run_fp32 = dequantize_matmul_bf16_out(torch.float32)(a, sfa, b, sfb)
    run_bf16 = dequantize_matmul_bf16_out(torch.bfloat16)(a, sfa, b, sfb)
    row = timed_row(m, n, k, runs, run_fgemm, run_fp32, run_bf16)
    row["calc_diff"] = fgemm.calc_diff(d, run_fp32())
    return row


def bench_int8_shape(m, n, k, runs):
    gen = torch.Generator().manual_seed(m + n + k)
    a = torch.randint(-127, 128, (m, k), generator=gen, dtype=torch.int8)
    b = torch.randint(-127, 128, (n, k), generator=gen, dtype=torch.int8)
    sa = torch.rand(m, generator=gen) * 0.01 + 0.001
    sb = torch.rand(n, generator=gen) * 0.01 + 0.001
    d = torch.empty(m, n, dtype=torch.bfloat16)
    run_fgemm = lambda: fgemm.int8_gemm_nt((a, sa), (b, sb), d)  # noqa: E731
    run_fp32 = dequantize_int8_matmul_bf16_out(torch.float32)(a, sa, b, sb)
    run_bf16 = dequantize_int8_matmul_bf16_out(torch.bfloat16)(a, sa, b, sb)
    row = timed_row(m, n, k, runs, run_fgemm, run_fp32, run_bf16)
    reference = (a.double() * sa.double()[:, None]) @ (b.double() * sb.double()[:, None]).t()
    row["calc_diff"] = fgemm.calc_diff(d, reference)
    return row


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default="seed", help="the shape table whose (N, K) are taken: built in "
                                                         "(fgemm.bench's seed, decode) or a JSON file (default: seed)")
    parser.add_argument("--ms", default="1,64,128,1024", help="the values of M (comma-separated)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per shape and side (default: 5)")
    parser.add_argument("--kind", choices=("fp8", "int8"), default="fp8",
                        help="FP8 (DeepSeek-V3's blocks) or INT8 W8A8 (per token x per channel) (default: fp8)")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--overhead", action="store_true", help="measure the host cost of a call instead")
    args = parser.parse_args()
    if args.overhead:
        for name, microseconds in call_overhead_us().items():
            print(f"{name}: {microseconds:.2f} us per call from Python (M = 0: arguments read and checked)")
        return

    isa, threads = fgemm._C.cpu_backend()
    machine = dict(kind=args.kind, cpu=cpu_model(), cores=os.cpu_count(), fgemm_isa=isa, fgemm_threads=threads,
                   torch_threads=torch.get_num_threads(), torch=torch.__version__,
                   omp_wait_policy=os.environ["OMP_WAIT_POLICY"], date=datetime.date.today().isoformat())
    print(f"{machine['cpu']}, {machine['cores']} cores; fgemm {isa} x {threads} threads, "
          f"torch {machine['torch']} x {machine['torch_threads']} threads, OMP_WAIT_POLICY={machine['omp_wait_policy']}")
    print(f"{'M':>5} {'N':>6} {'K':>5} | {'fgemm ms':>9} {'GFLOPS':>7} | {'fp32 ms':>9} {'bf16 ms':>9} | {'ratio':>6} "
          f"| calc_diff")
    rows = []
    for n, k in seed_nk_pairs(args.shapes):
        for m in map(int, args.ms.split(",")):
            row = (bench_int8_shape if args.kind == "int8" else bench_shape)(m, n, k, args.runs)
            rows.append(row)
            print(f"{m:>5} {n:>6} {k:>5} | {row['fgemm_ms']:9.3f} {row['fgemm_gflops']:7.1f} | "
                  f"{row['fp32_ms']:9.2f} {row['bf16_ms']:9.2f} | {row['ratio']:6.1f} | {row['calc_diff']:.1e}",
                  flush=True)
    geomean = math.exp(statistics.mean(math.log(row["ratio"]) for row in rows))
    print(f"geometric mean of the ratio (faster alternative's time / fgemm time): {geomean:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(machine=machine, rows=rows, geomean_ratio=geomean), indent=1))


if __name__ == "__main__":
    main()
