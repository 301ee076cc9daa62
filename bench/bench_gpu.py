"""GPU benchmark: fgemm against cuBLASLt's block-scaled FP8 GEMM (torch._scaled_mm) on the seed shapes.

Kernel time only (the durations of the kernels a call launches, from the profiler), L2 flushed before every
call, median of many calls after warm-up. Prints TFLOPS, GB/s and the ratios per shape and their geometric
means; --json writes the numbers.

    python bench/bench_gpu.py [--shapes ../shared/bench/seed_shapes.json] [--json out.json] [--jit]

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
import functools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

import fgemm

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
from gpu_reference import random_operands, reference_gemm  # noqa: E402

L2_FLUSH_BYTES = 256 << 20  # the "busy" flush: comfortably more than the 50 MB of an H100's L2
REST_FLUSH_BYTES = 8 * 10**9  # the "rested" flush: DeepGEMM's benchmark zeroes 8 GB before every call
SFA_LAYOUT = "mn-major"  # set from --sfa-layout


def fgemm_sfa(sfa):
    """The activation scales as fgemm is given them: MN-major and TMA-aligned, or row-major as quantized."""
    return fgemm.get_mn_major_tma_aligned_tensor(sfa) if SFA_LAYOUT == "mn-major" else sfa


def is_gpu_activity(event):
    return event.device_type == torch.autograd.DeviceType.CUDA


@functools.cache  # one profile per flush buffer (a tensor hashes by identity), not one per measurement
def flush_kernel_names(flush):
    """The names of the GPU activities that zeroing `flush` launches, which separate the calls in a profile."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA], acc_events=True) as profile:
        flush.zero_()
        torch.cuda.synchronize()
    return {event.name for event in profile.events() if is_gpu_activity(event)}


def kernel_times_us(calls, flush):
    """Kernel time of each function of `calls`, called in that order with L2 flushed before each, in
    microseconds: the durations of the GPU kernels it launched, summed, as the profiler records them. DeepGEMM's
    benchmark times its kernels so; CUDA events around a call would add about 3 µs of launch and completion,
    a quarter of the time of the shortest seed shapes."""
    separators = flush_kernel_names(flush)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA], acc_events=True) as profile:
        for fn in calls:
            flush.zero_()
            fn()
        torch.cuda.synchronize()
    times = times_between_flushes(filter(is_gpu_activity, profile.events()), separators)
    if len(times) != len(calls):
        raise RuntimeError(f"the profile holds {len(times)} flushes for {len(calls)} calls")
    return times


def times_between_flushes(events, separators):
    """The summed durations (µs) of the GPU activities after each flush, a flush being a run of activities
    named in `separators` (a large one is launched as several kernels), in the order they started."""
    times, in_flush = [], False
    for event in sorted(events, key=lambda event: event.time_range.start):
        if event.name in separators:
            if not in_flush:
                times.append(0.0)
            in_flush = True
        elif times:
            times[-1] += event.time_range.elapsed_us()
            in_flush = False
    return times


def kernel_time_us(fn, flush, warmup=5, repeats=40):
    """Median kernel time of fn() in microseconds, after `warmup` calls."""
    return statistics.median(kernel_times_us([fn] * (warmup + repeats), flush)[warmup:])


def paired_times_us(fns, flush, rounds=4, warmup=3, repeats=15):
    """Median kernel times of several functions measured in alternating rounds, so that a drift of the GPU's
    clocks or temperature during the run weighs on all of them alike."""
    calls = [fn for _ in range(rounds) for fn in fns for _ in range(warmup + repeats)]
    times = kernel_times_us(calls, flush)
    per_run = warmup + repeats
    samples = [[] for _ in fns]
    for run in range(rounds * len(fns)):
        samples[run % len(fns)] += times[run * per_run + warmup:(run + 1) * per_run]
    return [statistics.median(fn_times) for fn_times in samples]


def cublaslt_blockwise(a, sfa, b, sfb):
    """torch._scaled_mm with 1x128 activation scales (outer-dim-major) and 128x128 weight scales."""
    scale_a = sfa.t().contiguous().t()  # [M, K/128], M contiguous
    scale_b = sfb.t()  # [K/128, N/128]
    return lambda: torch._scaled_mm(a, b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)


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


def normal_gemm(m, n, k):
    """Random quantized operands, a BF16 output and the call that fills it."""
    (a, sfa), (b, sfb) = random_operands(m, n, k)
    d = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    sfa_in = fgemm_sfa(sfa)
    return (a, sfa), (b, sfb), d, lambda: fgemm.fp8_gemm_nt((a, sfa_in), (b, sfb), d)


def bench_normal(shapes, flushes):
    rows = []
    for shape in shapes:
        m, n, k = shape["m"], shape["n"], shape["k"]
        (a, sfa), (b, sfb), d, run_fgemm = normal_gemm(m, n, k)
        run_fgemm()
        ref = reference_gemm(a, sfa, b, sfb)
        diff = fgemm.calc_diff(d, ref)
        run_cublas = cublaslt_blockwise(a, sfa, b, sfb)
        cublas_diff, times = against_cublas(run_fgemm, run_cublas, ref, flushes)
        bytes_moved = m * k + n * k + m * n * 2 + 4 * (m + n // 128 + 1) * math.ceil(k / 128)
        rows.append(result_row(f"{m:>5} {n:>6} {k:>6}", 2 * m * n * k, times, diff, shape, kind="normal", m=m, n=n,
                               k=k, fgemm_gbps=bytes_moved / times["rested"][0] / 1e3, cublaslt_calc_diff=cublas_diff))
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


def grouped_operands(groups, m_per_group, n, k):
    """Per-expert activations [G, m, K] and weights [G, N, K], quantized; scales stacked the same way."""
    acts = [random_operands(m_per_group, n, k) for _ in range(groups)]
    a = torch.stack([x[0][0] for x in acts])
    sfa = torch.stack([x[0][1] for x in acts])
    b = torch.stack([x[1][0] for x in acts])
    sfb = torch.stack([x[1][1] for x in acts])
    return a, sfa, b, sfb


def grouped_gemm(kind, a, sfa, b, sfb):
    """fgemm's call on per-expert operands [G, m, K] in the contiguous layout (m rows per expert, no padding)
    or the masked one (every group full), the output of expert g, and cuBLASLt block-wise once per expert."""
    groups, m, k = a.shape
    n = b.shape[1]
    if kind == "contiguous":
        d = torch.empty(groups * m, n, dtype=torch.bfloat16, device="cuda")
        m_indices = torch.arange(groups, dtype=torch.int32, device="cuda").repeat_interleave(m)
        a_flat, sfa_flat = a.reshape(groups * m, k), fgemm_sfa(sfa.reshape(groups * m, -1))
        run_fgemm = lambda: fgemm.m_grouped_fp8_gemm_nt_contiguous(  # noqa: E731
            (a_flat, sfa_flat), (b, sfb), d, m_indices)
        out = lambda g: d[g * m:(g + 1) * m]  # noqa: E731
    else:
        d = torch.empty(groups, m, n, dtype=torch.bfloat16, device="cuda")
        masked_m = torch.full((groups,), m, dtype=torch.int32, device="cuda")
        sfa_in = fgemm_sfa(sfa)
        run_fgemm = lambda: fgemm.m_grouped_fp8_gemm_nt_masked((a, sfa_in), (b, sfb), d, masked_m, m)  # noqa: E731
        out = lambda g: d[g]  # noqa: E731
    per_expert = [cublaslt_blockwise(a[g], sfa[g], b[g], sfb[g]) for g in range(groups)]
    return run_fgemm, out, lambda: [run() for run in per_expert]


def bench_grouped(kind, shapes, flushes):
    """Contiguous (m_per_group rows per expert, no padding) and masked (every group full) seed shapes, against
    cuBLASLt block-wise called once per expert."""
    rows = []
    for shape in shapes:
        groups, m, n, k = shape["groups"], shape["m_per_group"], shape["n"], shape["k"]
        a, sfa, b, sfb = grouped_operands(groups, m, n, k)
        run_fgemm, out, run_cublas = grouped_gemm(kind, a, sfa, b, sfb)
        run_fgemm()
        diff = max(fgemm.calc_diff(out(g), reference_gemm(a[g], sfa[g], b[g], sfb[g])) for g in range(groups))
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
        _, _, _, run_fgemm = normal_gemm(m, n, k)
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
    parser.add_argument("--shapes", default=str(REPO.parent / "shared" / "bench" / "seed_shapes.json"))
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--jit", action="store_true", help="also time a cold JIT compile and the host overhead")
    parser.add_argument("--normal-only", action="store_true", help="skip the grouped (MoE) shapes")
    parser.add_argument("--sweep", action="store_true", help="also time every tile shape on each normal shape")
    parser.add_argument("--sfa-layout", choices=("mn-major", "row-major"), default=SFA_LAYOUT,
                        help="the layout of the activation scales fgemm is given (default: %(default)s)")
    args = parser.parse_args()
    SFA_LAYOUT = args.sfa_layout

    table = json.loads(Path(args.shapes).read_text())
    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    # On a GPU with less memory than an H100, as much of the 8 GB as leaves room for the largest shape.
    rest_bytes = min(REST_FLUSH_BYTES, torch.cuda.mem_get_info()[0] // 2)
    flushes = dict(rested=torch.empty(rest_bytes, dtype=torch.uint8, device="cuda"), busy=flush)
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
