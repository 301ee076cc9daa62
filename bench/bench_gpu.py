"""GPU benchmark: fgemm against cuBLASLt's block-scaled FP8 GEMM (torch._scaled_mm) on the seed shapes.

Kernel time only (the durations of the kernels a call launches, from the profiler), L2 flushed before every
call, median of many calls after warm-up. Prints TFLOPS, GB/s and the ratios per shape and their geometric
means; --json writes the numbers. The GB/s of the normal shapes are set against a 1 GiB device copy and against
a copy of each shape's own bytes, timed the same way.

    python bench/bench_gpu.py [--shapes seed|decode|FILE.json] [--json out.json] [--jit]

sfa is passed MN-major and TMA-aligned (the layout DeepGEMM requires and its figures were measured with)
unless --sfa-layout row-major is given. Where the shape table also holds cuBLASLt's figure from the run that
measured DeepGEMM's, the ratio to DeepGEMM is also estimated side by side: (fgemm / cuBLASLt here) /
(DeepGEMM / cuBLASLt there), which cancels the difference in clocks between the two GPUs.

fgemm and cuBLASLt are timed in rounds that alternate between them, under two flushes of L2:
  - "rested": an 8 GB buffer zeroed before every call, as DeepGEMM's own benchmark does, which took the figures
    of the shape table. Besides flushing L2 it gives the GPU about 3 ms of memory-bound work between calls, in
    which an H100 held at its power limit by the previous call gets its clock back. The ratios use these.
  - "busy": a 256 MB buffer, so the GPU is almost never idle: on the long shapes an H100 stays at its power
    limit, at a lower clock that depends on the board; what a fully loaded server sees.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

import fgemm
from fgemm.bench import tables
from fgemm.bench.baselines import cublaslt_blockwise, cublaslt_per_expert
from fgemm.bench.gpu_timing import L2_FLUSH_BYTES, kernel_time_us, paired_times_us, rested_flush_buffer
from fgemm.bench.metrics import gemm_bytes
from fgemm.bench.operations import grouped_gemm, normal_gemm, quantized_operands
from fgemm.bench.peaks import gpu_copy_gbps

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
from gpu_reference import random_operands, reference_gemm  # noqa: E402

SFA_LAYOUT = "mn-major"  # set from --sfa-layout


def sfa_mn_major():
    return SFA_LAYOUT == "mn-major"


def against_cublas(run_fgemm, run_cublas, ref, flushes):
    """(cuBLASLt's calc_diff against ref, {protocol: (fgemm's time, cuBLASLt's time)}) for the flush buffers of
    each protocol, timed in rounds alternating between the two; NaN for cuBLASLt where this torch build has no
    block-wise scaling."""
    try:
        out = run_cublas()
    except RuntimeError as error:
        print(f"cuBLASLt block-wise unavailable: {error}", file=sys.stderr)
        return float("nan"), {name: (kernel_time_us(run_fgemm, flush), float("nan"))
                              for name, flush in flushes.items()}
    cublas_diff = fgemm.calc_diff(out, ref) if ref is not None else float("nan")
    return cublas_diff, {name: tuple(paired_times_us([run_fgemm, run_cublas], flush))
                         for name, flush in flushes.items()}


def bench_normal(shapes, flushes):
    rows = []
    for shape in shapes:
        m, n, k = shape["m"], shape["n"], shape["k"]
        (a, sfa), (b, sfb), d, run_fgemm = normal_gemm(m, n, k, "cuda", sfa_mn_major())
        run_fgemm()
        ref = reference_gemm(a, sfa, b, sfb)
        diff = fgemm.calc_diff(d, ref)
        run_cublas = cublaslt_blockwise(a, sfa, b, sfb)
        cublas_diff, times = against_cublas(run_fgemm, run_cublas, ref, flushes)
        bytes_moved = gemm_bytes(1, m, n, k)
        # What a copy of the shape's own bytes reaches under the same protocol, launch and ramp-up included: on
        # the decode shapes, far less than a 1 GiB copy does.
        same_size_copy_gbps = gpu_copy_gbps(flushes["rested"], bytes_moved)
        rows.append(result_row(f"{m:>5} {n:>6} {k:>6}", 2 * m * n * k, times, diff, shape, kind="normal", m=m, n=n,
                               k=k, fgemm_gbps=bytes_moved / times["rested"][0] / 1e3,
                               same_size_copy_gbps=same_size_copy_gbps, cublaslt_calc_diff=cublas_diff))
    return rows


def result_row(label, flops, times, diff, shape, **fields):
    """One shape's numbers as a dict (for --json), printed as a line of the table. `times` holds (fgemm's time,
    cuBLASLt's) per protocol; the ratios are of the rested ones."""
    row = dict(fields, calc_diff=diff, deepgemm_h100_tflops=shape.get("h100_deepgemm_tflops"),
               cublaslt_h100_table_tflops=shape.get("h100_cublaslt_blockwise_tflops"))
    for name, (fgemm_us, cublas_us) in times.items():
        suffix = "" if name == "rested" else f"_{name}"
        row.update({f"fgemm{suffix}_us": fgemm_us, f"fgemm{suffix}_tflops": flops / fgemm_us / 1e6,
                    f"cublaslt{suffix}_us": cublas_us, f"cublaslt{suffix}_tflops": flops / cublas_us / 1e6})
    vs_cublas = row["fgemm_tflops"] / row["cublaslt_tflops"]
    table_cublas = row["cublaslt_h100_table_tflops"]
    # How close this GPU and protocol come to the run that measured DeepGEMM's figures: cuBLASLt against itself.
    row["cublaslt_vs_table"] = row["cublaslt_tflops"] / (table_cublas or math.nan)
    row["vs_deepgemm_via_cublaslt"] = vs_cublas / (row["deepgemm_h100_tflops"] / table_cublas) if table_cublas \
        else float("nan")
    print(f"{label} | fgemm {row['fgemm_us']:8.1f} us {row['fgemm_tflops']:7.1f} TFLOPS diff {diff:.1e} | "
          f"cuBLASLt {row['cublaslt_tflops']:7.1f} TFLOPS (x{row['cublaslt_vs_table']:.2f} its table figure) | "
          f"x{vs_cublas:.2f} vs cuBLASLt, x{row['fgemm_tflops'] / row['deepgemm_h100_tflops']:.2f} vs DeepGEMM "
          f"(H100 table), x{row['vs_deepgemm_via_cublaslt']:.2f} via cuBLASLt | busy: fgemm "
          f"{row['fgemm_busy_tflops']:7.1f}, cuBLASLt {row['cublaslt_busy_tflops']:7.1f} TFLOPS", flush=True)
    return row


def bench_grouped(kind, shapes, flushes):
    """Contiguous (m_per_group rows per expert, no padding) and masked (every group full) seed shapes, against
    cuBLASLt block-wise called once per expert."""
    rows = []
    for shape in shapes:
        groups, m, n, k = shape["groups"], shape["m_per_group"], shape["n"], shape["k"]
        (a, sfa), (b, sfb) = quantized_operands(groups, m, n, k, "cuda")
        run_fgemm, d = grouped_gemm(kind, a, sfa, b, sfb, sfa_mn_major())
        run_cublas = cublaslt_per_expert(a, sfa, b, sfb)
        run_fgemm()
        diff = max(fgemm.calc_diff(d[g], reference_gemm(a[g], sfa[g], b[g], sfb[g])) for g in range(groups))
        _, times = against_cublas(run_fgemm, run_cublas, None, flushes)
        rows.append(result_row(f"{kind:>10} G={groups} m={m:>5} {n:>5} {k:>5}", 2 * groups * m * n * k, times, diff,
                               shape, kind=kind, groups=groups, m_per_group=m, n=n, k=k))
    return rows


# (block_m, block_n, cluster_m, cluster_n): a cluster along M shares B, along N shares A.
SWEEP_CONFIGS = [(64, n, 1, 1) for n in (16, 32, 64, 128, 256)] + [(64, n, 1, 2) for n in (16, 32, 64, 128)] + \
    [(128, n, 1, 1) for n in (64, 96, 128, 160)] + [(128, n, 2, 1) for n in (96, 128, 160)] + \
    [(128, 128, 1, 2), (64, 256, 2, 1), (128, 256, 1, 1), (128, 256, 1, 2)] + \
    [(192, n, 1, 1) for n in (64, 96, 128)] + [(192, 128, 2, 1)]


def sweep(shapes, flush):
    """Times every configuration of SWEEP_CONFIGS on each shape: the data the heuristics are tuned with."""
    rows = []
    for shape in shapes:
        m, n, k = shape["m"], shape["n"], shape["k"]
        _, _, _, run_fgemm = normal_gemm(m, n, k, "cuda", sfa_mn_major())
        timings = {}
        for config in SWEEP_CONFIGS:
            fgemm._C._force_config(*config)
            try:
                us = kernel_time_us(run_fgemm, flush, warmup=2, repeats=15)
            except (ValueError, RuntimeError) as error:
                print(f"  {config}: {error}", file=sys.stderr)
                continue
            finally:
                fgemm._C._force_config(0, 0)
            timings["{}x{}c{}x{}".format(*config)] = us
        best = min(timings, key=timings.get)
        chosen = kernel_time_us(run_fgemm, flush, warmup=2, repeats=15)
        print(f"sweep {m:>5} {n:>6} {k:>6}: best {best} {timings[best]:.1f} us, heuristic {chosen:.1f} us | " +
              " ".join(f"{key}:{us:.0f}" for key, us in timings.items()), flush=True)
        rows.append(dict(m=m, n=n, k=k, timings_us=timings, heuristic_us=chosen))
    return rows


def geomean(values):
    values = [v for v in values if v == v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


JIT_PROGRAM = """
import time, torch, fgemm
(a, sfa), (b, sfb) = fgemm.per_token_cast_to_fp8(torch.randn(256, 4096, device="cuda")), \\
    fgemm.per_block_cast_to_fp8(torch.randn(3072, 4096, device="cuda"))
warm = torch.empty(256, 3072, dtype=torch.bfloat16, device="cuda")
fgemm.fp8_gemm_nt((a[:, :2048], sfa[:, :16]), (b[:, :2048], sfb[:, :16]), warm)  # context, first module
torch.cuda.synchronize()
d = torch.empty(256, 3072, dtype=torch.bfloat16, device="cuda")
start = time.perf_counter(); fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d); torch.cuda.synchronize()
cold = time.perf_counter() - start
start = time.perf_counter(); fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d); torch.cuda.synchronize()
print((cold - (time.perf_counter() - start)) * 1e3)
"""


def cold_jit_ms(compiler):
    """Compile-and-load time of one new kernel, in a fresh process with an empty cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, FGEMM_CACHE_DIR=cache, FGEMM_JIT_COMPILER=compiler)
        out = subprocess.run([sys.executable, "-c", JIT_PROGRAM], env=env, capture_output=True, text=True)
        if out.returncode != 0:
            return f"failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}"
        return float(out.stdout.strip().splitlines()[-1])


def host_overhead_us(calls=200):
    """Host time per call of fp8_gemm_nt from Python with a warm cache: a burst of calls much shorter than the
    launch queue, on a tiny shape, timed on the host from an idle GPU (so the queue never blocks the host)."""
    (a, sfa), (b, sfb) = random_operands(64, 256, 256)
    d = torch.empty(64, 256, dtype=torch.bfloat16, device="cuda")
    for _ in range(100):
        fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
    torch.cuda.synchronize()
    samples = []
    for _ in range(20):
        start = time.perf_counter()
        for _ in range(calls):
            fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
        samples.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return min(samples)


def main():
    global SFA_LAYOUT
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", default="seed", help="a built-in shape table of fgemm.bench (seed, decode) or a "
                                                         "JSON file of the same form (default: %(default)s)")
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--jit", action="store_true", help="also time a cold JIT compile and the host overhead")
    parser.add_argument("--normal-only", action="store_true", help="skip the grouped (MoE) shapes")
    parser.add_argument("--sweep", action="store_true", help="also time every tile shape on each normal shape")
    parser.add_argument("--sfa-layout", choices=("mn-major", "row-major"), default=SFA_LAYOUT,
                        help="the layout of the activation scales fgemm is given (default: %(default)s)")
    args = parser.parse_args()
    SFA_LAYOUT = args.sfa_layout

    table = tables.load_table(args.shapes)
    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    flushes = dict(rested=rested_flush_buffer(), busy=flush)
    rest_bytes = flushes["rested"].numel()
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"sfa {SFA_LAYOUT}, rested flush {rest_bytes / 1e9:.1f} GB")
    rows = bench_normal(table["normal"], flushes)
    grouped = []
    if not args.normal_only:
        grouped = bench_grouped("contiguous", table["m_grouped_contiguous"], flushes) + \
            bench_grouped("masked", table["m_grouped_masked"], flushes)

    def ratio(row, over, protocol=""):
        return row[f"fgemm{protocol}_tflops"] / row[over]

    summary = dict(
        gpu=torch.cuda.get_device_name(), torch=torch.__version__, sfa_layout=SFA_LAYOUT, rest_flush_bytes=rest_bytes,
        normal_geomean_vs_cublaslt=geomean([ratio(r, "cublaslt_tflops") for r in rows]),
        normal_min_vs_cublaslt=min(ratio(r, "cublaslt_tflops") for r in rows),
        normal_geomean_vs_deepgemm_table=geomean([ratio(r, "deepgemm_h100_tflops") for r in rows]),
        normal_geomean_vs_deepgemm_via_cublaslt=geomean([r["vs_deepgemm_via_cublaslt"] for r in rows]),
        normal_geomean_busy_vs_cublaslt_busy=geomean([ratio(r, "cublaslt_busy_tflops", "_busy") for r in rows]),
    )
    if grouped:
        summary["grouped_min_vs_deepgemm_table"] = min(ratio(r, "deepgemm_h100_tflops") for r in grouped)
        summary["grouped_geomean_vs_cublaslt"] = geomean([ratio(r, "cublaslt_tflops") for r in grouped])
        summary["grouped_min_vs_deepgemm_via_cublaslt"] = min(r["vs_deepgemm_via_cublaslt"] for r in grouped)
        summary["grouped_geomean_busy_vs_cublaslt_busy"] = geomean(
            [ratio(r, "cublaslt_busy_tflops", "_busy") for r in grouped])
    # Bound by memory: the bytes each shape must move over its time, against the copy bandwidth of this run.
    copy = gpu_copy_gbps(flushes["rested"])
    summary["copy_gbps"] = copy
    summary["normal_geomean_fraction_of_copy_bandwidth"] = geomean([r["fgemm_gbps"] / copy for r in rows])
    summary["same_size_copy_geomean_fraction_of_copy_bandwidth"] = geomean(
        [r["same_size_copy_gbps"] / copy for r in rows])
    summary["normal_geomean_fraction_of_same_size_copy"] = geomean(
        [r["fgemm_gbps"] / r["same_size_copy_gbps"] for r in rows])
    summary["normal_min_vs_deepgemm_table"] = min(ratio(r, "deepgemm_h100_tflops") for r in rows)
    for row in rows:
        row["fraction_of_copy_bandwidth"] = row["fgemm_gbps"] / copy
        row["fraction_of_same_size_copy"] = row["fgemm_gbps"] / row["same_size_copy_gbps"]
    every = rows + grouped
    summary["cublaslt_geomean_vs_table"] = geomean([r["cublaslt_vs_table"] for r in every])
    summary["cublaslt_busy_geomean_vs_table"] = geomean(
        [r["cublaslt_busy_tflops"] / (r["cublaslt_h100_table_tflops"] or math.nan) for r in every])
    if args.jit:
        summary["cold_jit_ms_nvrtc"] = cold_jit_ms("nvrtc")
        summary["cold_jit_ms_nvcc"] = cold_jit_ms("nvcc")
        summary["host_overhead_us"] = host_overhead_us()
    sweep_rows = sweep(table["normal"], flush) if args.sweep else []
    for key, value in summary.items():
        print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(summary=summary, rows=rows + grouped, sweep=sweep_rows), indent=1))


if __name__ == "__main__":
    main()
