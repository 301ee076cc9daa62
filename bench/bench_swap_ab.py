"""Swap AB on the decode shapes: FP8 through the 1D1D kernel, BF16 through the BF16 GEMM itself.

At decode M (1 to 128 tokens) most of a tile's 64 or 128 rows of A are empty. Swapping the operands, D^T = W X^T,
puts the weights' N rows on WGMMA's 64-row side and the tokens on its N side.

FP8 (--kind fp8, the default): its per-element math is the 1D1D recipe's: each weight row takes its 128 x 128
block's scale, each token column its own per 1 x 128. So fgemm's 1D1D kernel, given W with its block scales
repeated over the block's rows and X padded to 16 rows, computes what a swap-AB kernel would (D^T instead of D,
which at these sizes weighs nothing). This times it beside fp8_gemm_nt on the same operands, with the heuristics'
1D1D tile and with narrower forced ones.

BF16 (--kind bf16): the BF16 GEMM of the swapped operands, bf16_gemm_nt(W, X padded to 16 rows, D^T), is itself
a swap-AB GEMM: a stage's box of W is 64 or more weight rows, where the normal call's narrow tiles load 16 to 64.
This times it beside bf16_gemm_nt and cuBLAS (torch.mm) on the rows of `bf16_normal` with M <= 128 (NT, each
row's output type, without C), with the heuristics' choice for the swapped problem and with 64-row tiles split
in two, four and eight.

Both: kernel time under the rested protocol (an 8 GB buffer zeroed before every call, the calls alternating in
rounds), and D^T checked against D.

    python bench/bench_swap_ab.py [--kind fp8|bf16] [--shapes decode|FILE.json] [--json swap_ab.json]
"""

import argparse
import json
import math
import sys

import torch

import fgemm
from fgemm.bench import tables
from fgemm.bench.gpu_timing import paired_times_us, rested_flush_buffer
from fgemm.bench.operations import quantized_operands, with_forced_config

SWAPPED_ROWS = 16  # the tokens padded to a multiple of this: D^T's rows must be 16-byte aligned
FORCED_TILE_COLUMNS = (32, 64)  # 1D1D tiles are 128 weight rows; narrower token sides than the padded M


def swapped_operands(a, sfa, b, sfb):
    """((W, its scales per row, MN-major), (X padded with zero rows, its scales), D^T [N, M padded]) for the 1D1D
    call that computes fp8_gemm_nt((a, sfa), (b, sfb))'s D transposed."""
    m, k = a.shape
    n = b.shape[0]
    padded = max(SWAPPED_ROWS, -(-m // SWAPPED_ROWS) * SWAPPED_ROWS)
    x = torch.zeros(padded, k, dtype=a.dtype, device=a.device)
    x[:m] = a
    x_scales = torch.ones(padded, sfa.shape[1], dtype=sfa.dtype, device=a.device)
    x_scales[:m] = sfa
    w_scales = fgemm.get_mn_major_tma_aligned_tensor(sfb.repeat_interleave(128, 0)[:n].contiguous())
    d_t = torch.empty(n, padded, dtype=torch.bfloat16, device=a.device)
    return (b, w_scales), (x, x_scales), d_t


def swapped_gemm(w, x, d_t):
    fgemm.fp8_gemm_nt(w, x, d_t, recipe=(1, 1, 128))


def best_swapped_us(times):
    return min(us for name, us in times.items() if name.startswith("swapped"))


def timed(runs, d, d_t, flush):
    """Each run once (compiling fgemm's kernels), D^T checked against the normal call's D, then the runs' times
    alternating in rounds, and the normal call's time over the best swapped one."""
    for run in runs.values():
        run()
    torch.cuda.synchronize()
    diff = fgemm.calc_diff(d_t[:, :d.shape[0]].t(), d)
    times = dict(zip(runs, paired_times_us(list(runs.values()), flush, rounds=2, warmup=2, repeats=10)))
    return dict(calc_diff=diff, times_us=times, best_swapped_over_normal=times["normal"] / best_swapped_us(times))


def swapped_16bit_operands(a, b, d):
    """(W, X padded with zero rows, D^T [N, M padded] of D's dtype) for the BF16 call that computes
    bf16_gemm_nt(a, b, d)'s D transposed."""
    m, k = a.shape
    padded = max(SWAPPED_ROWS, -(-m // SWAPPED_ROWS) * SWAPPED_ROWS)
    x = torch.zeros(padded, k, dtype=a.dtype, device=a.device)
    x[:m] = a
    return b, x, torch.empty(b.shape[0], padded, dtype=d.dtype, device=a.device)


SPLITS_16BIT = (2, 4, 8)  # forced splits of the swapped BF16 call's 64-row tiles


def bench_16bit_row(row, flush):
    m, n, k = row["m"], row["n"], row["k"]
    generator = torch.Generator("cuda").manual_seed(m + n + k)
    a = torch.randn(m, k, generator=generator, device="cuda").bfloat16()
    b = torch.randn(n, k, generator=generator, device="cuda").bfloat16()
    out = torch.float32 if row["out"] == "fp32" else torch.bfloat16
    d, d_cublas = (torch.empty(m, n, dtype=out, device="cuda") for _ in range(2))
    w, x, d_t = swapped_16bit_operands(a, b, d)
    extra = {} if out == torch.bfloat16 else dict(out_dtype=out)
    runs = {"normal": lambda: fgemm.bf16_gemm_nt(a, b, d),
            "cublas": lambda: torch.mm(a, b.t(), out=d_cublas, **extra),
            "swapped": lambda: fgemm.bf16_gemm_nt(w, x, d_t)}
    for split in SPLITS_16BIT:
        forced = with_forced_config(runs["swapped"], 64, x.shape[0], 0, 0, split)
        try:
            forced()
        except ValueError:  # not a configuration of this shape (the split does not divide its K blocks)
            continue
        runs[f"swapped 64x{x.shape[0]} split {split}"] = forced
    result = timed(runs, d, d_t, flush)
    return dict(m=m, n=n, k=k, out=row["out"], **result,
                best_swapped_over_cublas=result["times_us"]["cublas"] / best_swapped_us(result["times_us"]))


def bf16_rows():
    """The NT rows of bf16_normal with M <= 128, once per shape and output type."""
    rows = []
    for row in tables.load_table("precision_anchors")["bf16_normal"]:
        shape = {key: row[key] for key in ("m", "n", "k", "out")}
        if row["layout"] == "NT" and row["m"] <= 128 and shape not in rows:
            rows.append(shape)
    return rows


def bench_shape(m, n, k, flush):
    (a, sfa), (b, sfb) = quantized_operands(None, m, n, k, "cuda")
    d = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    sfa_mn = fgemm.get_mn_major_tma_aligned_tensor(sfa)
    w, x, d_t = swapped_operands(a, sfa, b, sfb)
    runs = {"normal": lambda: fgemm.fp8_gemm_nt((a, sfa_mn), (b, sfb), d),
            "swapped": lambda: swapped_gemm(w, x, d_t)}
    padded_tokens = x[0].shape[0]
    for columns in FORCED_TILE_COLUMNS:
        if columns < padded_tokens:
            runs[f"swapped 128x{columns}"] = with_forced_config(runs["swapped"], 128, columns)
    return dict(m=m, n=n, k=k, **timed(runs, d, d_t, flush))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kind", choices=("fp8", "bf16"), default="fp8")
    parser.add_argument("--shapes", default="decode", help="fp8: a built-in shape table of fgemm.bench or a JSON "
                                                           "file of the same form (default: %(default)s)")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        sys.exit("bench_swap_ab.py: needs a CUDA device")
    flush = rested_flush_buffer()
    rows = []
    shapes = tables.load_table(args.shapes)["normal"] if args.kind == "fp8" else bf16_rows()
    for shape in shapes:
        if args.kind == "fp8":
            row = bench_shape(shape["m"], shape["n"], shape["k"], flush)
        else:
            row = bench_16bit_row(shape, flush)
        rows.append(row)
        print(f"{row['m']:>4} {row['n']:>6} {row['k']:>6} | " +
              " | ".join(f"{name} {us:.1f} us" for name, us in row["times_us"].items()) +
              f" | normal / best swapped {row['best_swapped_over_normal']:.2f} | calc_diff {row['calc_diff']:.1e}")
    speedups = [row["best_swapped_over_normal"] for row in rows]
    summary = dict(gpu=torch.cuda.get_device_name(), kind=args.kind,
                   geomean_best_swapped_over_normal=math.exp(sum(map(math.log, speedups)) / len(speedups)),
                   max_best_swapped_over_normal=max(speedups),
                   max_calc_diff=max(row["calc_diff"] for row in rows))
    if args.kind == "bf16":
        over_cublas = [row["best_swapped_over_cublas"] for row in rows]
        summary["geomean_best_swapped_over_cublas"] = math.exp(sum(map(math.log, over_cublas)) / len(over_cublas))
    for key, value in summary.items():
        print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(dict(summary=summary, rows=rows), out, indent=1)
    if summary["max_calc_diff"] >= 1e-5:
        sys.exit("bench_swap_ab.py: D^T differs from D")


if __name__ == "__main__":
    main()
