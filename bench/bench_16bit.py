"""GPU benchmark of the BF16 and FP16 GEMMs against cuBLAS (torch.mm) and DeepGEMM's figures, on the shapes of
the precision anchors (python/fgemm/bench/shapes/precision_anchors.json).

    python bench/bench_16bit.py [--json out.json] [--quick] [--markdown] [--sections normal m_grouped k_grouped]
    python bench/bench_16bit.py --markdown-from out.json     tables for docs/PERFORMANCE.md from a saved run
    python bench/bench_16bit.py --dry-run                    every row's plumbing on tiny CPU tensors

Sections:
  normal     the 75 rows of `bf16_normal` (NT forward, NN and TN backward; BF16 or FP32 out; C or not, C being D
             as in DeepGEMM's test) with fgemm's function of the row's letters against torch.mm on the same tensors, in
             BF16 and again in FP16 (fgemm.fp16_gemm_* against torch's FP16 mm), with DeepGEMM's figure from the table
             and the FP16 / BF16 ratio of each side.
  m_grouped  the rows of `bf16_m_grouped_contiguous` (NT and NN, m_indices or psum) against DeepGEMM's figures
             and cuBLAS called once per expert. The table gives M_sum only: each expert gets an equal share of
             whole 128-row tiles and no padding rows, which is the row count DeepGEMM's TFLOPS are of.
  k_grouped  the shapes of `fp8_k_grouped_contiguous` in BF16 (k_grouped_bf16_gemm_tn_contiguous, D = C + Aᵀ·B
             per expert, accumulated in place) against cuBLAS once per expert (torch.addmm of the experts' slices
             into FP32). The table's DeepGEMM figures are of FP8 and are not compared.

Timing as bench/bench_gpu.py and docs/PERFORMANCE.md describe it ("rested"): kernel time from the profiler, an
8 GB buffer zeroed before every call, fgemm and cuBLAS alternating in rounds, medians; the ratios are fgemm's
throughput over the other's. Before timing, each side's D from one call is compared with an FP64 reference
(calc_diff); a calc_diff of 1e-5 or more makes the exit status 1.

cuBLAS, as a torch user calls it: torch.mm(a, b, out=d) with the layout's transposed views (no copies),
out_dtype=torch.float32 for FP32 D, and with C torch.addmm(d, a, b, out=d), accumulating in place into a D that
starts as C; fgemm's function takes c=d, as DeepGEMM's test calls its own (C of D's type, accumulated in place).
"""

import argparse
import dataclasses
import itertools
import json
import sys
from pathlib import Path
from typing import Callable

import torch

import fgemm
from fgemm.bench import tables
from fgemm.bench.cpu_timing import median_ms
from fgemm.bench.gpu_timing import paired_times_us, rested_flush_buffer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_16bit_tables import markdown, summarize  # noqa: E402
from bench_gpu import geomean  # noqa: E402

MAX_DIFF = 1e-5
TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
SECTIONS = ("normal", "m_grouped", "k_grouped")


@dataclasses.dataclass
class Pair:
    """One row's two calls on the same operands, with what their D must hold."""
    fields: dict  # the row's shape and options, as the results report them
    flops: int
    run_fgemm: Callable[[], object]
    run_cublas: Callable[[], object]
    results: Callable[[], tuple]  # (fgemm's D, cuBLAS's D) after one call of each
    expected: torch.Tensor  # FP64


def torch_gemm(a, b, d, accumulate):
    """torch's D = A·B, or D += A·B in place (C being what d holds), into d: cuBLAS on the GPU (in place it reads
    C from D, with no copy of C before the GEMM). FP32 D from 16-bit operands takes mm's out_dtype, which only
    CUDA has; on the CPU (the dry run) the product of FP32 copies."""
    extra = {}
    if d.dtype != a.dtype:
        if a.is_cuda:
            extra = dict(out_dtype=d.dtype)
        else:
            a, b = a.float(), b.float()
    if accumulate:
        return lambda: torch.addmm(d, a, b, out=d, **extra)
    return lambda: torch.mm(a, b, out=d, **extra)


def randn(shape, dtype, device, generator):
    return torch.randn(shape, generator=generator, device=device).to(dtype)


def normal_pair(row, dtype, device, generator):
    """A row of bf16_normal in `dtype`: A and B stored as its layout letters say, D of its output type, and C if
    it accumulates: C of D's type, which both sides accumulate into in place (each D starts as C), as DeepGEMM's
    test runs its own rows."""
    m, n, k, letters = row["m"], row["n"], row["k"], row["layout"].lower()
    ab = TORCH_DTYPES[dtype]
    a = randn((m, k) if letters[0] == "n" else (k, m), ab, device, generator)
    b = randn((n, k) if letters[1] == "t" else (k, n), ab, device, generator)
    a_mk = a if letters[0] == "n" else a.t()
    b_kn = b.t() if letters[1] == "t" else b
    out = ab if row["out"] == "bf16" else torch.float32
    d, d_cublas = torch.empty(m, n, dtype=out, device=device), torch.empty(m, n, dtype=out, device=device)
    c = torch.randn(m, n, generator=generator, device=device).to(out) if row["accumulate"] else None
    function = getattr(fgemm, f"{dtype}_gemm_{letters}")
    run_fgemm = lambda: function(a, b, d, None if c is None else d)  # noqa: E731
    run_cublas = torch_gemm(a_mk, b_kn, d_cublas, c is not None)

    def results():
        if c is not None:
            d.copy_(c)
            d_cublas.copy_(c)
        run_fgemm()
        run_cublas()
        return d, d_cublas

    expected = a_mk.double() @ b_kn.double() + (0 if c is None else c.double())
    fields = dict(dtype=dtype, m=m, n=n, k=k, layout=row["layout"], out=row["out"], accumulate=row["accumulate"])
    if dtype == "bf16":  # DeepGEMM's figures are of BF16 (it has no FP16 GEMM)
        fields["deepgemm_us"] = row["deepgemm_us"]
        # DeepGEMM over cuBLAS in the run that measured it; the table's TFLOPS are whole numbers, too coarse below
        # 50 for a ratio.
        if row["cublas_tflops"] >= 50:
            fields["deepgemm_vs_cublas_there"] = row["deepgemm_tflops"] / row["cublas_tflops"]
    return Pair(fields, 2 * m * n * k, run_fgemm, run_cublas, results, expected)


def equal_shares(total, parts, unit=128):
    """`total` (a multiple of unit) split into `parts` multiples of unit, as equal as can be."""
    units = total // unit
    return [(units // parts + (g < units % parts)) * unit for g in range(parts)]


def m_grouped_pair(row, device, generator):
    groups, m_sum, n, k, letters = row["groups"], row["m_sum"], row["n"], row["k"], row["layout"].lower()
    sizes = equal_shares(m_sum, groups)
    ends = list(itertools.accumulate(sizes))
    starts = [end - size for end, size in zip(ends, sizes)]
    a = randn((m_sum, k), torch.bfloat16, device, generator)
    b = randn((groups, n, k) if letters == "nt" else (groups, k, n), torch.bfloat16, device, generator)
    b_kn = b.transpose(1, 2) if letters == "nt" else b
    if row["psum_layout"]:
        grouped_layout = torch.tensor(ends, dtype=torch.int32, device=device)
    else:
        grouped_layout = torch.repeat_interleave(torch.arange(groups, dtype=torch.int32, device=device),
                                                 torch.tensor(sizes, device=device))
    d, d_cublas = (torch.empty(m_sum, n, dtype=torch.bfloat16, device=device) for _ in range(2))
    function = getattr(fgemm, f"m_grouped_bf16_gemm_{letters}_contiguous")
    run_fgemm = lambda: function(a, b, d, grouped_layout, use_psum_layout=row["psum_layout"])  # noqa: E731
    per_expert = [torch_gemm(a[s:s + size], b_kn[g], d_cublas[s:s + size], accumulate=False)
                  for g, (s, size) in enumerate(zip(starts, sizes))]
    run_cublas = lambda: [run() for run in per_expert]  # noqa: E731
    expected = torch.cat([a[s:s + size].double() @ b_kn[g].double() for g, (s, size) in enumerate(zip(starts, sizes))])

    def results():
        run_fgemm()
        run_cublas()
        return d, d_cublas

    fields = dict(groups=groups, m_sum=m_sum, n=n, k=k, layout=row["layout"], psum_layout=row["psum_layout"],
                  deepgemm_us=row["deepgemm_us"])
    return Pair(fields, 2 * m_sum * n * k, run_fgemm, run_cublas, results, expected)


def k_grouped_pair(row, device, generator):
    groups, m, n, k_sum = row["groups"], row["m"], row["n"], row["k_sum"]
    ks = equal_shares(k_sum, groups)
    ks_tensor = torch.tensor(ks, dtype=torch.int32, device=device)
    a = randn((k_sum, m), torch.bfloat16, device, generator)
    b = randn((k_sum, n), torch.bfloat16, device, generator)
    c = torch.randn(groups, m, n, generator=generator, device=device)
    d, d_cublas = torch.empty_like(c), torch.empty_like(c)
    firsts = [sum(ks[:g]) for g in range(groups)]
    run_fgemm = lambda: fgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, ks_tensor, c=d)  # noqa: E731
    per_expert = [torch_gemm(a[f:f + kg].t(), b[f:f + kg], d_cublas[g], accumulate=True)
                  for g, (f, kg) in enumerate(zip(firsts, ks))]
    run_cublas = lambda: [run() for run in per_expert]  # noqa: E731
    expected = torch.stack([c[g].double() + a[f:f + kg].double().t() @ b[f:f + kg].double()
                            for g, (f, kg) in enumerate(zip(firsts, ks))])

    def results():
        d.copy_(c)
        d_cublas.copy_(c)
        run_fgemm()
        run_cublas()
        return d, d_cublas

    fields = dict(groups=groups, m=m, n=n, k_sum=k_sum)
    return Pair(fields, 2 * m * n * k_sum, run_fgemm, run_cublas, results, expected)


def measure(pair, flush):
    """The row's result: both sides' calc_diff against the FP64 reference, their times (kernel time, rested
    flush; on the dry run one host-timed call each) and throughputs."""
    d, d_cublas = pair.results()
    row = dict(pair.fields, calc_diff=fgemm.calc_diff(d, pair.expected),
               cublas_calc_diff=fgemm.calc_diff(d_cublas, pair.expected))
    pair.expected = None  # the FP64 reference can take gigabytes; not needed while timing
    if flush is None:
        fgemm_us, cublas_us = (ms * 1e3 for ms in median_ms([pair.run_fgemm, pair.run_cublas], runs=1))
    else:
        fgemm_us, cublas_us = paired_times_us([pair.run_fgemm, pair.run_cublas], flush)
    row.update(fgemm_us=fgemm_us, cublas_us=cublas_us, fgemm_tflops=pair.flops / fgemm_us / 1e6,
               cublas_tflops=pair.flops / cublas_us / 1e6, flops=pair.flops)
    row["vs_cublas"] = row["fgemm_tflops"] / row["cublas_tflops"]
    if row.get("deepgemm_us"):
        row["deepgemm_tflops"] = pair.flops / row["deepgemm_us"] / 1e6
        row["vs_deepgemm"] = row["fgemm_tflops"] / row["deepgemm_tflops"]
    if row.get("deepgemm_vs_cublas_there"):
        # (fgemm / cuBLAS here) / (DeepGEMM / cuBLAS there): cancels a difference in clocks between the GPUs.
        row["vs_deepgemm_via_cublas"] = row["vs_cublas"] / row["deepgemm_vs_cublas_there"]
    return row


def shrunk(row):
    """The row scaled down for the dry run, keeping its layout, groups and options."""
    small = dict(row)
    for key, cap in (("m", 72), ("n", 40), ("k", 48)):  # multiples of 8: rows of 16 bytes either way
        if key in small:
            small[key] = min(small[key], cap)
    if "m_sum" in small:
        small["m_sum"] = 128 * small["groups"]
    if "k_sum" in small:
        small["k_sum"] = 128 * small["groups"]
    return small


def section_rows(table, section, quick):
    """The table's rows a section runs: every one, or every fifth with --quick."""
    name = {"normal": "bf16_normal", "m_grouped": "bf16_m_grouped_contiguous",
            "k_grouped": "fp8_k_grouped_contiguous"}[section]
    rows = table[name]
    return rows[::5] if quick else rows


def pairs_of(section, row, device, generator):
    """The row's pairs, made one at a time (each holds its operands and FP64 reference, gigabytes on the large
    rows)."""
    if section == "normal":
        yield normal_pair(row, "bf16", device, generator)
        yield normal_pair(row, "fp16", device, generator)
    elif section == "m_grouped":
        yield m_grouped_pair(row, device, generator)
    else:
        yield k_grouped_pair(row, device, generator)


def print_row(section, row):
    shape = " ".join(f"{key}={row[key]}" for key in ("dtype", "groups", "m", "m_sum", "n", "k", "k_sum", "layout",
                                                     "out", "accumulate", "psum_layout") if key in row)
    deepgemm = f", x{row['vs_deepgemm']:.2f} DeepGEMM" if "vs_deepgemm" in row else ""
    print(f"{section:>9} {shape} | fgemm {row['fgemm_us']:9.1f} us {row['fgemm_tflops']:6.1f} TFLOPS diff "
          f"{row['calc_diff']:.1e} | cuBLAS {row['cublas_tflops']:6.1f} TFLOPS diff {row['cublas_calc_diff']:.1e} | "
          f"x{row['vs_cublas']:.2f} cuBLAS{deepgemm}", flush=True)


def run(args):
    device = "cpu" if args.dry_run else "cuda"
    flush = None
    if not args.dry_run:
        flush = rested_flush_buffer()
        print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, CUDA {torch.version.cuda}, "
              f"rested flush {flush.numel() / 1e9:.1f} GB", flush=True)
    table = tables.load_table("precision_anchors")
    generator = torch.Generator(device).manual_seed(0)
    results = {}
    for section in args.sections:
        results[section] = []
        for row in section_rows(table, section, args.quick):
            for pair in pairs_of(section, shrunk(row) if args.dry_run else row, device, generator):
                measured = measure(pair, flush)
                print_row(section, measured)
                results[section].append(measured)
            if device == "cuda":
                torch.cuda.empty_cache()  # the next row's operands may be large
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--quick", action="store_true", help="every fifth row of each table")
    parser.add_argument("--json", help="write the rows and the summary to this file")
    parser.add_argument("--markdown", action="store_true", help="print the tables for docs/PERFORMANCE.md")
    parser.add_argument("--markdown-from", metavar="JSON", help="print the tables of a saved run, and stop")
    parser.add_argument("--dry-run", action="store_true", help="tiny CPU tensors, one host-timed call per side")
    args = parser.parse_args(argv)
    if args.markdown_from:
        print(markdown(json.loads(Path(args.markdown_from).read_text())))
        return 0
    if not args.dry_run and not torch.cuda.is_available():
        parser.error("needs a CUDA device (or --dry-run)")
    results = run(args)
    saved = dict(gpu=torch.cuda.get_device_name() if not args.dry_run else "cpu (dry run)",
                 torch=torch.__version__, quick=args.quick, rows=results, summary=summarize(results, geomean))
    for key, value in saved["summary"].items():
        print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(saved, indent=1))
    if args.markdown:
        print(markdown(saved))
    wrong = [row for rows in results.values() for row in rows
             if not (row["calc_diff"] < MAX_DIFF and row["cublas_calc_diff"] < MAX_DIFF)]
    for row in wrong:
        print(f"calc_diff {row['calc_diff']:.2e} (cuBLAS {row['cublas_calc_diff']:.2e}) >= {MAX_DIFF}: {row}",
              file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
