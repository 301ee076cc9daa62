"""GPU benchmark of the INT8 GEMMs: fgemm's W8A8 (per-token x per-channel scales, BF16 out) against what a torch
user has, torch._int_mm alone and torch._int_mm followed by the scaling, and fgemm's INT8 block recipe against
fgemm's FP8 on the same shapes, all side by side in one run.

    python bench/bench_int8.py [--json out.json] [--markdown] [--quick]
    python bench/bench_int8.py --markdown-from out.json     tables for docs/PERFORMANCE.md from a saved run
    python bench/bench_int8.py --dry-run                    every row's plumbing on tiny CPU tensors

Rows: the 18 normal shapes of `int8_normal` (python/fgemm/bench/shapes/precision_anchors.json, the normal seed
shapes at M = 64, 128 and 4096) and the 10 grouped seed shapes (seed.json: m-grouped contiguous and masked,
every group full, as the seed table runs them). For the grouped rows torch._int_mm is called once per expert.

Columns (kernel time from the profiler, an 8 GB buffer zeroed before every call, the sides alternating in
rounds, medians, as docs/PERFORMANCE.md describes):
  w8a8      fgemm.int8_gemm_nt((a, sa [M]), (b, sb [N]), d bf16) (grouped: the m-grouped functions)
  int_mm    torch._int_mm(a, b.t()), int32 out
  scaled    torch._int_mm(a, b.t()) * sa[:, None] * sb[None, :], to bf16 (one expression, as a torch user writes)
  block     fgemm.int8_gemm_nt((a, sa [M, K/128]), (b, sb [N/128, K/128]), d bf16)
  fp8       fgemm.fp8_gemm_nt on FP8 operands of the same shape, d bf16
Before timing, w8a8's, scaled's and block's D are compared with a float64 reference (calc_diff); one of 1e-5 or
more makes the exit status 1.
"""

import argparse
import json
import math
import sys
from pathlib import Path

import torch

import fgemm
from fgemm.bench import tables
from fgemm.bench.cpu_timing import median_ms
from fgemm.bench.gpu_timing import paired_times_us, rested_flush_buffer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gpu import geomean  # noqa: E402

MAX_DIFF = 1e-5
BLOCK = 128
SIDES = ("w8a8", "int_mm", "scaled", "block", "fp8")


def int8(shape, device, gen):
    return torch.randint(-128, 128, shape, generator=gen, device=device, dtype=torch.int8)


def positive(shape, device, gen):
    return torch.rand(shape, generator=gen, device=device) * 0.01 + 0.001


def block_scales(rows, k, device, gen, lead=()):
    return positive((*lead, math.ceil(rows / BLOCK), math.ceil(k / BLOCK)), device, gen)


def fp8_operands(groups_a, m, groups_b, n, k, device, gen):
    """FP8 A and B of the shapes of the INT8 ones (their values do not matter to the timing)."""
    lead_a = (groups_a,) if groups_a else ()
    a = torch.randn((*lead_a, m, k), generator=gen, device=device).to(torch.float8_e4m3fn)
    b = torch.randn((groups_b, n, k) if groups_b else (n, k), generator=gen, device=device).to(torch.float8_e4m3fn)
    sfa = positive((*lead_a, m, math.ceil(k / BLOCK)), device, gen)
    sfb = block_scales(n, k, device, gen, lead=(groups_b,) if groups_b else ())
    return (a, sfa), (b, sfb)


def block_reference(a, sa, b, sb):
    n, k = b.shape
    sb_rows = sb.double().repeat_interleave(BLOCK, dim=0)[:n]
    d = torch.zeros(a.shape[0], n, dtype=torch.float64, device=a.device)
    for kb in range(math.ceil(k / BLOCK)):
        cols = slice(kb * BLOCK, (kb + 1) * BLOCK)
        d += sa.double()[:, kb, None] * sb_rows[None, :, kb] * (a[:, cols].double() @ b[:, cols].double().T)
    return d


def normal_row(row, device, gen):
    """The five calls of one normal row, and the checks of three of them."""
    m, n, k = row["m"], row["n"], row["k"]
    a, b = int8((m, k), device, gen), int8((n, k), device, gen)
    sa, sb = positive((m,), device, gen), positive((n,), device, gen)
    sa_block, sb_block = positive((m, math.ceil(k / BLOCK)), device, gen), block_scales(n, k, device, gen)
    fp8_a, fp8_b = fp8_operands(0, m, 0, n, k, device, gen)
    d = torch.empty(m, n, dtype=torch.bfloat16, device=device)
    d_block = torch.empty_like(d)
    d_fp8 = torch.empty_like(d)
    bt = b.t()
    outputs = {}

    def scaled():
        outputs["scaled"] = (torch._int_mm(a, bt) * sa[:, None] * sb[None, :]).to(torch.bfloat16)

    calls = {
        "w8a8": lambda: fgemm.int8_gemm_nt((a, sa), (b, sb), d),
        "int_mm": lambda: torch._int_mm(a, bt),
        "scaled": scaled,
        "block": lambda: fgemm.int8_gemm_nt((a, sa_block), (b, sb_block), d_block),
        "fp8": lambda: fgemm.fp8_gemm_nt(fp8_a, fp8_b, d_fp8),
    }

    def checks():
        exact = a.double() @ b.double().T
        rowcol = exact * sa.double()[:, None] * sb.double()[None, :]
        return {"w8a8": fgemm.calc_diff(d, rowcol), "scaled": fgemm.calc_diff(outputs["scaled"], rowcol),
                "block": fgemm.calc_diff(d_block, block_reference(a, sa_block, b, sb_block))}

    return calls, checks, 2 * m * n * k


def grouped_row(row, layout, device, gen):
    """The five calls of one grouped row: every group full (m_per_group rows each)."""
    groups, rows, n, k = row["groups"], row["m_per_group"], row["n"], row["k"]
    m_sum = groups * rows
    b = int8((groups, n, k), device, gen)
    sb = positive((groups, n), device, gen)
    sb_block = block_scales(n, k, device, gen, lead=(groups,))
    if layout == "contiguous":
        a = int8((m_sum, k), device, gen)
        sa, sa_block = positive((m_sum,), device, gen), positive((m_sum, math.ceil(k / BLOCK)), device, gen)
        m_indices = torch.arange(groups, device=device, dtype=torch.int32).repeat_interleave(rows)
        d = torch.empty(m_sum, n, dtype=torch.bfloat16, device=device)
        fp8_a, fp8_b = fp8_operands(0, m_sum, groups, n, k, device, gen)
        expert_a = [a[g * rows:(g + 1) * rows] for g in range(groups)]
        expert_sa = [sa[g * rows:(g + 1) * rows] for g in range(groups)]

        def run(operands_a, operands_b, out):
            fgemm.m_grouped_int8_gemm_nt_contiguous(operands_a, operands_b, out, m_indices)

        def run_fp8(out):
            fgemm.m_grouped_fp8_gemm_nt_contiguous(fp8_a, fp8_b, out, m_indices)
    else:
        a = int8((groups, rows, k), device, gen)
        sa, sa_block = positive((groups, rows), device, gen), positive((groups, rows, math.ceil(k / BLOCK)), device, gen)
        counts = torch.full((groups,), rows, dtype=torch.int32, device=device)
        d = torch.empty(groups, rows, n, dtype=torch.bfloat16, device=device)
        fp8_a, fp8_b = fp8_operands(groups, rows, groups, n, k, device, gen)
        expert_a = list(a)
        expert_sa = list(sa)

        def run(operands_a, operands_b, out):
            fgemm.m_grouped_int8_gemm_nt_masked(operands_a, operands_b, out, counts, rows)

        def run_fp8(out):
            fgemm.m_grouped_fp8_gemm_nt_masked(fp8_a, fp8_b, out, counts, rows)
    d_block, d_fp8 = torch.empty_like(d), torch.empty_like(d)
    expert_bt = [b[g].t() for g in range(groups)]
    outputs = {}

    def scaled():
        outputs["scaled"] = [(torch._int_mm(expert_a[g], expert_bt[g]) * expert_sa[g][:, None] * sb[g][None, :])
                             .to(torch.bfloat16) for g in range(groups)]

    calls = {
        "w8a8": lambda: run((a, sa), (b, sb), d),
        "int_mm": lambda: [torch._int_mm(expert_a[g], expert_bt[g]) for g in range(groups)],
        "scaled": scaled,
        "block": lambda: run((a, sa_block), (b, sb_block), d_block),
        "fp8": lambda: run_fp8(d_fp8),
    }

    def checks():
        rows_of = (lambda t, g: t[g * rows:(g + 1) * rows]) if layout == "contiguous" else (lambda t, g: t[g])
        diffs = {"w8a8": [], "scaled": [], "block": []}
        for g in range(groups):
            exact = expert_a[g].double() @ b[g].double().T
            rowcol = exact * expert_sa[g].double()[:, None] * sb[g].double()[None, :]
            diffs["w8a8"].append(fgemm.calc_diff(rows_of(d, g), rowcol))
            diffs["scaled"].append(fgemm.calc_diff(outputs["scaled"][g], rowcol))
            diffs["block"].append(fgemm.calc_diff(rows_of(d_block, g),
                                                  block_reference(expert_a[g], rows_of(sa_block, g), b[g], sb_block[g])))
        return {side: max(values) for side, values in diffs.items()}

    return calls, checks, 2 * m_sum * n * k


def measure(fields, calls, checks, flops, flush):
    for call in calls.values():
        call()  # compiles fgemm's kernels, fills `outputs`
    if flush is not None:
        torch.cuda.synchronize()
    row = dict(fields, flops=flops)
    row.update({f"{side}_calc_diff": diff for side, diff in checks().items()})
    fns = [calls[side] for side in SIDES]
    if flush is None:
        times = [ms * 1e3 for ms in median_ms(fns, runs=1)]
    else:
        times = paired_times_us(fns, flush)
    for side, us in zip(SIDES, times):
        row[f"{side}_us"] = us
        row[f"{side}_tops"] = flops / us / 1e6
    row["w8a8_vs_int_mm"] = row["int_mm_us"] / row["w8a8_us"]
    row["w8a8_vs_scaled"] = row["scaled_us"] / row["w8a8_us"]
    row["block_vs_fp8"] = row["fp8_us"] / row["block_us"]
    return row


def label(row):
    if "groups" in row:
        return f"{row['layout']} G={row['groups']} {row['m_per_group']}x{row['n']}x{row['k']}"
    return f"{row['m']}x{row['n']}x{row['k']}"


def summarize(rows):
    normal = [row for row in rows if "groups" not in row]
    summary = {}
    for key in ("w8a8_vs_int_mm", "w8a8_vs_scaled", "block_vs_fp8"):
        for name, subset in (("normal", normal), ("all", rows)):
            if subset:
                lowest = min(subset, key=lambda row: row[key])
                summary[f"{name}_{key}_geomean"] = geomean([row[key] for row in subset])
                summary[f"{name}_{key}_min"] = lowest[key]
                summary[f"{name}_{key}_min_row"] = label(lowest)
    big = [row for row in normal if row["m"] == 4096 and row["k"] >= 2048]
    if big:
        summary["w8a8_min_tops_m4096_k2048_up"] = min(row["w8a8_tops"] for row in big)
    return summary


def markdown(saved):
    rows, lines = saved["rows"], []
    lines.append("| shape | W8A8 TOPS | _int_mm TOPS | _int_mm + scaling TOPS | W8A8 / _int_mm | W8A8 / scaled | "
                 "block INT8 TOPS | FP8 TFLOPS | block / FP8 |")
    lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        lines.append(f"| {label(row)} | {row['w8a8_tops']:.0f} | {row['int_mm_tops']:.0f} | {row['scaled_tops']:.0f} "
                     f"| {row['w8a8_vs_int_mm']:.2f} | {row['w8a8_vs_scaled']:.2f} | {row['block_tops']:.0f} "
                     f"| {row['fp8_tops']:.0f} | {row['block_vs_fp8']:.3f} |")
    lines.append("")
    for key, value in saved["summary"].items():
        lines.append(f"- {key}: {value:.3f}" if isinstance(value, float) else f"- {key}: {value}")
    return "\n".join(lines)


def shrunk(row):
    small = dict(row)
    for key in ("m", "m_per_group"):
        if key in small:
            small[key] = min(small[key], 128)
    small["n"], small["k"] = min(small["n"], 256), min(small["k"], 512)
    if "groups" in small:
        small["groups"] = min(small["groups"], 2)
    return small


def all_rows(quick):
    normal = tables.load_table("precision_anchors")["int8_normal"]
    seed = tables.load_table("seed")
    rows = [("normal", {key: row[key] for key in ("m", "n", "k")}) for row in normal]
    for layout in ("contiguous", "masked"):
        rows += [(layout, {"layout": layout, **{key: row[key] for key in ("groups", "m_per_group", "n", "k")}})
                 for row in seed[f"m_grouped_{layout}"]]
    if quick:
        rows = [(kind, fields) for kind, fields in rows if fields.get("m", 4096) == 4096][::2]
    return rows


def run(args):
    device = "cpu" if args.dry_run else "cuda"
    flush = None if args.dry_run else rested_flush_buffer()
    gen = torch.Generator(device=device).manual_seed(8)
    results = []
    for kind, fields in all_rows(args.quick):
        if args.dry_run:
            fields = shrunk(fields)
        if kind == "normal":
            calls, checks, flops = normal_row(fields, device, gen)
        else:
            calls, checks, flops = grouped_row(fields, kind, device, gen)
        row = measure(fields, calls, checks, flops, flush)
        results.append(row)
        print(f"{label(row):40s} w8a8 {row['w8a8_tops']:7.1f} int_mm {row['int_mm_tops']:7.1f} scaled "
              f"{row['scaled_tops']:7.1f} block {row['block_tops']:7.1f} fp8 {row['fp8_tops']:7.1f}  "
              f"w8a8/int_mm {row['w8a8_vs_int_mm']:.2f} block/fp8 {row['block_vs_fp8']:.3f}", flush=True)
    saved = {"device": torch.cuda.get_device_name() if not args.dry_run else "cpu (dry run)",
             "rows": results, "summary": summarize(results)}
    return saved


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--markdown", action="store_true", help="print the tables of docs/PERFORMANCE.md")
    parser.add_argument("--markdown-from", help="print the tables of a saved run and exit")
    parser.add_argument("--quick", action="store_true", help="every other M = 4096 row only")
    parser.add_argument("--dry-run", action="store_true", help="tiny CPU tensors, host-timed: the plumbing only")
    args = parser.parse_args(argv)
    if args.markdown_from:
        print(markdown(json.loads(Path(args.markdown_from).read_text())))
        return 0
    saved = run(args)
    for key, value in saved["summary"].items():
        print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(saved, indent=1))
    if args.markdown:
        print(markdown(saved))
    worst = max(max(row[f"{side}_calc_diff"] for side in ("w8a8", "scaled", "block")) for row in saved["rows"])
    return 0 if worst < MAX_DIFF else 1


if __name__ == "__main__":
    sys.exit(main())
