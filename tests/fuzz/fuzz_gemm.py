"""Fuzz runner of every fgemm GEMM: FP8, BF16, FP16 and INT8, every layout and storage order, against FP64 references.

    python tests/fuzz/fuzz_gemm.py --seed S --cases-per-layout N [--device cuda|cpu] [--ops PATTERN ...]
                                   [--json out.json] [--shapes-per-layout P] [--jobs J]
    python tests/fuzz/fuzz_gemm.py --replay S:I [--device ...] [--shapes-per-layout P]

From the seed it draws N cases for each GEMM function (a "layout": fp8_gemm_nt, bf16_gemm_tn,
m_grouped_fp16_gemm_nn_contiguous, k_grouped_bf16_gemm_tn_contiguous, int8_gemm_nt, ...; fp8_gemm_nt_1d1d is
fp8_gemm_nt with recipe (1, 1, 128), B scaled per 1 x 128 like A, as is k_grouped_fp8_gemm_nt_contiguous; --ops
takes their names or shell patterns such as 'fp8*' or '*masked'). A case draws M (0 to 5000 on the GPU, often a tile edge: 0, 1, 63,
64, 65, 127, 128, 129), N and K (rarely multiples of 64; K a multiple of 16 for FP8 and INT8), the output type, C
(none, an FP32 tensor of its own, one of a 16-bit D's type, or D itself), extra padding in each operand's rows,
and per layout the experts' sizes with empty ones and -1 padding (m_indices) or the prefix sums with unaligned
ends (use_psum_layout), masked_m and expected_m, or the experts' K with zeros. An FP8 case draws whether its scales are MN-major or
row-major (sfa, and sfb where it is per 1 x 128). An INT8 case draws its recipe too: the exact INT32 product
(int8_gemm_nt only: int32 D, no C or bias), per token and per channel (with each shape the scales may have), or
DeepSeek's 1 x 128 and 128 x 128 blocks; for int8_gemm_nt a bias (none, FP32 or D's 16-bit type); and values
that are sometimes only -128 and 127. D lies inside a NaN-filled storage (an int32 D inside one filled with
-2^31); after the call the storage outside D and D's rows that must keep their values must still hold that
poison, and the computed rows must match an FP64 reference (tests/fuzz/fuzz_checks.py says how closely; the
exact INT32 product bit for bit). Each failure is printed with its seed and case index and the command that
replays it alone; the summary gives the cases, failures and time per layout, and the exit status is 1 if any
case failed.

The GPU kernels are compiled per N and K, so each layout draws --shapes-per-layout (N, K) pairs per run and its
cases share them; other seeds draw others. On the GPU --jobs worker processes (default 8) compile in parallel.
"""

import argparse
import fnmatch
import json
import math
import os
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "python")]  # the fuzz modules and the tests' FP64 helpers

from fuzz_cases import LAYOUT_NAMES, LAYOUTS, LIMITS, case_indices, draw_case  # noqa: E402
from fuzz_runner import run_all, run_one  # noqa: E402

DEFAULT_SHAPES_PER_LAYOUT = 4
PROGRESS_SECONDS = 10


def selected_layouts(patterns):
    if not patterns:
        return list(LAYOUTS)
    unknown = [pattern for pattern in patterns if not fnmatch.filter(LAYOUT_NAMES, pattern)]
    if unknown:
        raise SystemExit(f"--ops: {', '.join(unknown)} names no layout; the layouts: {', '.join(LAYOUT_NAMES)}")
    return [layout for layout in LAYOUTS if any(fnmatch.fnmatch(layout.name, pattern) for pattern in patterns)]


def replay_command(seed, index, args):
    extra = "" if args.shapes_per_layout == DEFAULT_SHAPES_PER_LAYOUT else \
        f" --shapes-per-layout {args.shapes_per_layout}"
    return f"python tests/fuzz/fuzz_gemm.py --device {args.device} --replay {seed}:{index}{extra}"


def report_failure(result, seed, args):
    print(f"FAIL {seed}:{result['index']} {result['layout']}: {'; '.join(result['problems'])}\n"
          f"  case: {json.dumps(result['params'])}\n  replay: {replay_command(seed, result['index'], args)}",
          flush=True)


class Summary:
    """Cases, failures, time and the largest calc_diff per layout, filled in as results come."""

    def __init__(self, layouts):
        self.rows = {layout.name: dict(cases=0, failures=0, seconds=0.0, max_calc_diff=0.0) for layout in layouts}
        self.failures = []

    def add(self, result):
        row = self.rows[result["layout"]]
        row["cases"] += 1
        row["seconds"] += result["seconds"]
        if not math.isnan(result["calc_diff"]):
            row["max_calc_diff"] = max(row["max_calc_diff"], result["calc_diff"])
        if result["problems"]:
            row["failures"] += 1
            self.failures.append(result)

    def print(self, wall_seconds):
        width = max(map(len, self.rows))
        print(f"\n{'layout':<{width}} {'cases':>6} {'failures':>8} {'seconds':>8} {'max calc_diff':>13}")
        for name, row in self.rows.items():
            print(f"{name:<{width}} {row['cases']:>6} {row['failures']:>8} {row['seconds']:>8.1f} "
                  f"{row['max_calc_diff']:>13.2e}")
        cases = sum(row["cases"] for row in self.rows.values())
        print(f"{'all':<{width}} {cases:>6} {len(self.failures):>8} {wall_seconds:>8.1f} (wall)")


def replay(spec, args):
    seed, _, index = spec.partition(":")
    if not (seed.lstrip("-").isdigit() and index.isdigit()):
        raise SystemExit(f"--replay: expected SEED:INDEX, got '{spec}'")
    params = draw_case(int(seed), int(index), LIMITS[args.device], args.shapes_per_layout)
    result = run_one(params, args.device)
    print(f"case {seed}:{index}: {json.dumps(params)}\ncalc_diff {result['calc_diff']:.3e}, "
          f"{result['seconds']:.2f} s")
    if result["problems"]:
        report_failure(result, seed, args)
        return 1
    print("passed")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0, help="the seed the cases are drawn from (default: 0)")
    parser.add_argument("--cases-per-layout", type=int, default=100, help="cases per layout (default: 100)")
    parser.add_argument("--device", choices=("cuda", "cpu"),
                        default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--ops", nargs="+", metavar="PATTERN", help="the layouts to run (names or shell patterns)")
    parser.add_argument("--json", help="write the summary and every failure to this file")
    parser.add_argument("--replay", metavar="SEED:INDEX", help="run one case alone, as a failure printed it")
    parser.add_argument("--shapes-per-layout", type=int, default=DEFAULT_SHAPES_PER_LAYOUT,
                        help="(N, K) pairs each layout draws per run (default: %(default)s)")
    parser.add_argument("--jobs", type=int, help="worker processes (default: 8 on the GPU, 1 on the CPU)")
    args = parser.parse_args(argv)
    if args.shapes_per_layout < 1 or args.cases_per_layout < 0:
        raise SystemExit("--shapes-per-layout must be at least 1 and --cases-per-layout not negative")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch sees no CUDA device")
    if args.replay:
        return replay(args.replay, args)

    layouts = selected_layouts(args.ops)
    jobs = args.jobs or (min(8, os.cpu_count() or 1) if args.device == "cuda" else 1)
    cases = [draw_case(args.seed, index, LIMITS[args.device], args.shapes_per_layout)
             for index in case_indices(layouts, args.cases_per_layout)]
    print(f"fuzz: seed {args.seed}, {len(cases)} cases ({args.cases_per_layout} per layout, {len(layouts)} layouts) "
          f"on {args.device}, {args.shapes_per_layout} kernel shapes per layout, {jobs} process(es)", flush=True)
    summary = Summary(layouts)
    start = last_progress = time.perf_counter()

    def on_results(results):
        nonlocal last_progress
        for result in results:
            summary.add(result)
            if result["problems"]:
                report_failure(result, args.seed, args)
        if time.perf_counter() - last_progress >= PROGRESS_SECONDS:
            last_progress = time.perf_counter()
            done = sum(row["cases"] for row in summary.rows.values())
            print(f"  {done}/{len(cases)} cases, {len(summary.failures)} failed, {last_progress - start:.0f} s",
                  flush=True)

    run_all(cases, args.device, jobs, on_results)
    wall = time.perf_counter() - start
    summary.print(wall)
    if args.json:
        Path(args.json).write_text(json.dumps(dict(
            seed=args.seed, device=args.device, cases_per_layout=args.cases_per_layout,
            shapes_per_layout=args.shapes_per_layout, jobs=jobs, wall_seconds=wall, layouts=summary.rows,
            failures=[dict(result, replay=replay_command(args.seed, result["index"], args))
                      for result in summary.failures]), indent=1))
    return 1 if summary.failures else 0


if __name__ == "__main__":
    sys.exit(main())
