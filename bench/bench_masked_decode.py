"""Masked-layout decode as DeepSeek-V3 serves it with expert parallelism: many local experts, each with the few
tokens routing gave it, a few with none.

Each row is one rank's expert GEMM of a decode step: G local experts (32 for 256 experts over 8 ranks, 8 over
32), `expected_m` tokens per expert on average. The counts are drawn as routing draws them: every token of the
step picks an expert with probability top-k / 256 (binomial counts around expected_m), and one expert in
sixteen (at least one) gets none, as unbalanced routing leaves some. Three sides, timed in alternating rounds
with the "rested" flush of bench_gpu.py (kernel time, an 8 GB buffer zeroed before every call):

  - fgemm's m_grouped_fp8_gemm_nt_masked on those counts, told their mean as expected_m;
  - the same call with every expert holding exactly expected_m rows: the uniform load benchmarks usually show;
  - cuBLASLt's block-scaled FP8 GEMM (torch._scaled_mm) once per expert on its rows, rounded up to a multiple of
    16 (cuBLASLt's block-scaled FP8 takes no fewer), empty experts skipped: what a torch user without a masked
    kernel runs.

Bound by memory: the bytes a row must move (the weights and scales of the experts that have tokens, their
tokens, D's rows) over its time, against a 1 GiB device-to-device copy timed in the same run. Every D is checked
against float64 of the dequantized operands first (calc_diff below 1e-5).

    python bench/bench_masked_decode.py [--json out.json] [--markdown] [--dry-run]
"""

import argparse
import json
import math
import sys
import time
from pathlib import Path

import torch

import fgemm
from fgemm.bench.baselines import cublaslt_blockwise
from fgemm.bench.gpu_timing import paired_times_us, rested_flush_buffer
from fgemm.bench.metrics import geomean
from fgemm.bench.peaks import gpu_copy_gbps

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
from gpu_reference import reference_gemm  # noqa: E402

NUM_EXPERTS, TOP_K, BLOCK = 256, 8, 128
MAX_DIFF = 1e-5
# (local experts, expected tokens per expert); (N, K): the experts' fused gate and up projection, and down.
LOADS = [(32, 8), (32, 16), (32, 32), (32, 64), (32, 128), (8, 32), (8, 128)]
PROJECTIONS = [(4096, 7168), (7168, 2048)]
CUBLASLT_ROWS = 16  # the fewest rows cuBLASLt's block-scaled FP8 GEMM takes, and their multiple


def routed_counts(groups, expected_m, generator):
    """Tokens per local expert: binomial around expected_m (each of the step's tokens picks the expert with
    probability top-k / 256), and one expert in sixteen, at least one, empty."""
    tokens = expected_m * NUM_EXPERTS // TOP_K
    probs = torch.full((groups,), TOP_K / NUM_EXPERTS)
    counts = torch.binomial(torch.full((groups,), float(tokens)), probs, generator=generator).to(torch.int32)
    empty = torch.randperm(groups, generator=generator)[:max(1, groups // 16)]
    counts[empty] = 0
    return counts


def operands(groups, capacity, n, k, device, generator):
    x = torch.randn(groups, capacity, k, generator=generator).to(device)
    w = torch.randn(groups, n, k, generator=generator).to(device)
    return fgemm.per_token_cast_to_fp8(x), fgemm.per_block_cast_to_fp8(w)


def moved_bytes(counts, n, k):
    """FP8 weights and their 128 x 128 scales of the experts with tokens, FP8 tokens and their 1 x 128 scales,
    BF16 D rows."""
    k_blocks = math.ceil(k / BLOCK)
    rows = int(counts.sum())
    active = int((counts > 0).sum())
    return active * (n * k + 4 * math.ceil(n / BLOCK) * k_blocks) + rows * (k + 4 * k_blocks + 2 * n)


def measure(groups, expected_m, n, k, device, generator, flush):
    counts = routed_counts(groups, expected_m, generator)
    capacity = fgemm.ceil_div(max(expected_m, int(counts.max())), CUBLASLT_ROWS) * CUBLASLT_ROWS
    (a, sfa), (b, sfb) = operands(groups, capacity, n, k, device, generator)
    sfa_in = fgemm.get_mn_major_tma_aligned_tensor(sfa)
    masked_m = counts.to(device)
    full_m = torch.full((groups,), expected_m, dtype=torch.int32, device=device)
    d = torch.full((groups, capacity, n), float("nan"), dtype=torch.bfloat16, device=device)
    d_uniform = torch.empty_like(d)
    mean_m = max(1, round(float(counts.float().mean())))
    calls = {
        "routed": lambda: fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa_in), (b, sfb), d, masked_m, mean_m),
        "uniform": lambda: fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa_in), (b, sfb), d_uniform, full_m, expected_m),
    }
    if device == "cuda":
        padded = [fgemm.ceil_div(c, CUBLASLT_ROWS) * CUBLASLT_ROWS for c in counts.tolist()]
        per_expert = [cublaslt_blockwise(a[g, :rows], sfa[g, :rows], b[g], sfb[g])
                      for g, rows in enumerate(padded) if rows > 0]
        calls["cublaslt"] = lambda: [run() for run in per_expert]
    for call in calls.values():
        call()
    diff = max(fgemm.calc_diff(d[g, :c], reference_gemm(a[g, :c], sfa[g, :c], b[g], sfb[g]))
               for g, c in enumerate(counts.tolist()) if c > 0)
    if flush is None:
        times = []
        for call in calls.values():
            start = time.perf_counter()
            call()
            times.append((time.perf_counter() - start) * 1e6)
    else:
        times = paired_times_us(list(calls.values()), flush)
    row = {"groups": groups, "expected_m": expected_m, "n": n, "k": k, "counts": counts.tolist(),
           "rows": int(counts.sum()), "empty": int((counts == 0).sum()), "calc_diff": diff,
           "bytes": moved_bytes(counts, n, k), "uniform_bytes": moved_bytes(full_m.cpu(), n, k)}
    row.update({f"{side}_us": us for side, us in zip(calls, times)})
    row["routed_gbps"] = row["bytes"] / row["routed_us"] / 1e3
    row["uniform_gbps"] = row["uniform_bytes"] / row["uniform_us"] / 1e3
    row["routed_tflops"] = 2 * row["rows"] * n * k / row["routed_us"] / 1e6
    if "cublaslt_us" in row:
        row["vs_cublaslt"] = row["cublaslt_us"] / row["routed_us"]
    return row


def markdown(saved):
    lines = ["| G | expected m | N x K | rows (empty experts) | routed µs | uniform µs | cuBLASLt per expert µs | "
             "× cuBLASLt | routed GB/s | fraction of copy bandwidth | uniform fraction |",
             "| ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in saved["rows"]:
        lines.append(f"| {r['groups']} | {r['expected_m']} | {r['n']} x {r['k']} | {r['rows']} ({r['empty']}) | "
                     f"{r['routed_us']:.1f} | {r['uniform_us']:.1f} | {r.get('cublaslt_us', float('nan')):.1f} | "
                     f"{r.get('vs_cublaslt', float('nan')):.2f} | {r['routed_gbps']:.0f} | "
                     f"{r.get('fraction_of_copy', float('nan')):.2f} | "
                     f"{r.get('uniform_fraction_of_copy', float('nan')):.2f} |")
    lines.append("")
    lines += [f"- {key}: {value:.3f}" if isinstance(value, float) else f"- {key}: {value}"
              for key, value in saved["summary"].items()]
    return "\n".join(lines)


def run(args):
    device = "cpu" if args.dry_run else "cuda"
    flush = None if args.dry_run else rested_flush_buffer()
    generator = torch.Generator().manual_seed(24)
    loads = [(4, 4)] if args.dry_run else LOADS
    projections = [(256, 384)] if args.dry_run else PROJECTIONS
    rows = []
    for groups, expected_m in loads:
        for n, k in projections:
            row = measure(groups, expected_m, n, k, device, generator, flush)
            rows.append(row)
            print(f"G={groups:3d} m~{expected_m:4d} {n:5d}x{k:5d} rows {row['rows']:5d} ({row['empty']} empty): "
                  f"routed {row['routed_us']:8.1f} us  uniform {row['uniform_us']:8.1f} us  "
                  f"cuBLASLt {row.get('cublaslt_us', float('nan')):8.1f} us  diff {row['calc_diff']:.1e}",
                  flush=True)
    summary = {"max_calc_diff": max(r["calc_diff"] for r in rows)}
    if not args.dry_run:
        copy = gpu_copy_gbps(flush)
        summary["copy_gbps"] = copy
        for r in rows:
            r["fraction_of_copy"] = r["routed_gbps"] / copy
            r["uniform_fraction_of_copy"] = r["uniform_gbps"] / copy
        summary["routed_geomean_fraction_of_copy"] = geomean([r["fraction_of_copy"] for r in rows])
        summary["uniform_geomean_fraction_of_copy"] = geomean([r["uniform_fraction_of_copy"] for r in rows])
        summary["vs_cublaslt_geomean"] = geomean([r["vs_cublaslt"] for r in rows])
        summary["vs_cublaslt_min"] = min(r["vs_cublaslt"] for r in rows)
    return {"device": torch.cuda.get_device_name() if not args.dry_run else "cpu (dry run)",
            "rows": rows, "summary": summary}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--markdown", action="store_true", help="print the table of docs/PERFORMANCE.md")
    parser.add_argument("--dry-run", action="store_true", help="tiny CPU tensors, host-timed: the plumbing only")
    args = parser.parse_args(argv)
    saved = run(args)
    if args.json:
        Path(args.json).write_text(json.dumps(saved, indent=1))
    if args.markdown:
        print(markdown(saved))
    return 0 if saved["summary"]["max_calc_diff"] < MAX_DIFF else 1


if __name__ == "__main__":
    sys.exit(main())
