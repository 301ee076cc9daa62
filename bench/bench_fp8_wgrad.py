"""GPU benchmark of the FP8 weight-gradient GEMMs (recipe 1D1D: A and B both scaled per 1x128 block along K)
against DeepGEMM's H100 figures, with cuBLASLt's unscaled FP8 GEMM (torch._scaled_mm with unit scales) measured
side by side in the same run.

    python bench/bench_fp8_wgrad.py [--json out.json] [--quick] [--tiles 128x128 192x128 ...]

Rows: the 1D1D rows of `fp8_normal` in python/fgemm/bench/shapes/precision_anchors.json (FP32 out accumulating
onto C, and BF16 out), and its `fp8_k_grouped_contiguous` rows (D[g] = C[g] + A_g B_g^T, the experts' K as
DeepGEMM's test draws them, each a multiple of 128). Columns (kernel time from the profiler, an 8 GB buffer
zeroed before every call, medians, docs/PERFORMANCE.md):
  fgemm     fgemm.fp8_gemm_nt(..., recipe=(1, 1, 128)) (FP32 rows: c is d, accumulation in place), or
            fgemm.k_grouped_fp8_gemm_nt_contiguous (c is d)
  fgemm_1d2d  BF16 rows only: fgemm.fp8_gemm_nt on the same shape with B scaled per 128 x 128 block, which is
            what DeepGEMM's figure of the row measures: its sm90 1D1D kernel writes FP32 D only, and its test
            runs the BF16 weight-gradient row with the default recipe (tests/generators.py: B is cast per block
            unless the row accumulates)
  cublaslt  torch._scaled_mm of the same FP8 operands with unit scales, BF16 out (no fine-grained scaling:
            a speed-of-light reference)
  deepgemm  DeepGEMM's figure from the anchors file (its own test on an H100)
Before timing, fgemm's D is compared with a float64 reference of the dequantized operands (calc_diff); 1e-5 or
more makes the exit status 1. `--tiles` also times fgemm with each of the given tiles forced (BLOCK_M x BLOCK_N,
fgemm._C._force_config), in the same alternating rounds, each checked the same way first: the data the 1D1D
heuristics are fitted to.
"""

import argparse
import json
import math
import sys
from pathlib import Path

import torch

import fgemm
from fgemm.bench.gpu_timing import paired_times_us, rested_flush_buffer
from fgemm.bench.operations import with_forced_config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gpu import geomean  # noqa: E402

ANCHORS = Path(fgemm.__file__).parent / "bench" / "shapes" / "precision_anchors.json"
MAX_DIFF = 1e-5


def quantized(rows, k, gen):
    x = torch.randn(rows, k, generator=gen, device="cuda")
    return fgemm.per_token_cast_to_fp8(x, mn_major_scales=True)


def dequantized(codes, scales):
    return codes.double() * scales.double().repeat_interleave(128, dim=-1)[..., :codes.size(-1)]


def with_forced_tiles(run, tiles, check):
    """The forced runs of `run` for each tile fgemm supports on the problem, each checked first by `check` (which
    runs its argument on fresh output and returns calc_diff): {name: (run, diff)}."""
    runs = {}
    for tile in tiles:
        name = "{}x{}".format(*tile)
        try:
            run_forced = with_forced_config(run, *tile)
            runs[name] = (run_forced, check(run_forced))
        except ValueError as error:  # not a configuration of this problem
            print(f"  {name}: {error}", file=sys.stderr)
    return runs


def add_tile_times(result, tile_runs, times):
    """The forced tiles' times (`times`, in the order of `tile_runs`) and diffs into the row's result."""
    result["tiles_us"] = dict(zip(tile_runs, times))
    result["tiles_diff"] = {name: diff for name, (_, diff) in tile_runs.items()}
    if tile_runs:
        best = min(result["tiles_us"], key=result["tiles_us"].get)
        print(f"  {result['shape']}: chosen {result['fgemm_us']:.1f} us, best forced {best} "
              f"{result['tiles_us'][best]:.1f} us | " +
              " ".join(f"{name}:{us:.1f}" for name, us in result["tiles_us"].items()), flush=True)


def normal_row(row, flush, gen, tiles=()):
    m, n, k = row["m"], row["n"], row["k"]
    fp32 = row["out"] == "fp32"
    a, b = quantized(m, k, gen), quantized(n, k, gen)
    c = torch.randn(m, n, generator=gen, device="cuda")
    d = c.clone() if fp32 else torch.empty(m, n, dtype=torch.bfloat16, device="cuda")

    def run():
        fgemm.fp8_gemm_nt(a, b, d, d if fp32 else None, recipe=(1, 1, 128))

    reference = dequantized(*a) @ dequantized(*b).T + (c.double() if fp32 else 0)

    def check(runner):
        d.copy_(c) if fp32 else d.fill_(float("nan"))
        runner()
        return fgemm.calc_diff(d.double(), reference)

    diff = check(run)
    tile_runs = with_forced_tiles(run, tiles, check)
    one = torch.ones((), device="cuda")
    unscaled = lambda: torch._scaled_mm(a[0], b[0].t(), one, one, out_dtype=torch.bfloat16)  # noqa: E731
    runs = [run, unscaled]
    if not fp32:
        b_blocks = fgemm.per_block_cast_to_fp8(torch.randn(n, k, generator=gen, device="cuda"))
        d_1d2d = torch.empty_like(d)
        runs.append(lambda: fgemm.fp8_gemm_nt(a, b_blocks, d_1d2d))
    times = paired_times_us(runs + [forced_run for forced_run, _ in tile_runs.values()], flush)
    t_fgemm, t_cublas = times[:2]
    flops = 2 * m * n * k
    result = {"shape": f"{m}x{n}x{k} {row['out']}", "diff": diff, "fgemm_us": t_fgemm, "cublaslt_us": t_cublas,
              "fgemm_tflops": flops / t_fgemm / 1e6, "deepgemm_tflops": row["deepgemm_tflops"],
              "vs_deepgemm": flops / t_fgemm / 1e6 / row["deepgemm_tflops"], "vs_cublaslt": t_cublas / t_fgemm}
    if not fp32:
        result["fgemm_1d2d_us"] = times[2]
        result["fgemm_1d2d_vs_deepgemm"] = flops / times[2] / 1e6 / row["deepgemm_tflops"]
    add_tile_times(result, tile_runs, times[len(runs):])
    return result


def expert_ks(groups, k_sum, gen):
    """Each expert's K, multiples of 128 summing to k_sum rounded to 128 (DeepGEMM's test draws them around the
    mean)."""
    blocks = k_sum // 128
    weights = torch.rand(groups, generator=torch.Generator().manual_seed(groups)) + 0.5
    ks = [int(w / weights.sum() * blocks) * 128 for w in weights]
    ks[-1] += blocks * 128 - sum(ks)
    return ks


def k_grouped_row(row, flush, gen, tiles=()):
    groups, m, n = row["groups"], row["m"], row["n"]
    ks = expert_ks(groups, row["k_sum"], gen)
    blocks_a, blocks_b, sfa, sfb, reference = [], [], [], [], []
    for k in ks:
        a, b = quantized(m, k, gen), quantized(n, k, gen)
        blocks_a.append(a[0].flatten())
        blocks_b.append(b[0].flatten())
        sfa.append(a[1])
        sfb.append(b[1])
        reference.append(dequantized(*a) @ dequantized(*b).T)
    a = (torch.cat(blocks_a), fgemm.get_mn_major_tma_aligned_tensor(torch.cat(sfa, dim=1)))
    b = (torch.cat(blocks_b), fgemm.get_mn_major_tma_aligned_tensor(torch.cat(sfb, dim=1)))
    c = torch.randn(groups, m, n, generator=gen, device="cuda")
    d = c.clone()
    ks_tensor = torch.tensor(ks, dtype=torch.int32, device="cuda")

    def run():
        fgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, ks_tensor, d)

    reference = torch.stack(reference) + c.double()

    def check(runner):
        d.copy_(c)
        runner()
        return fgemm.calc_diff(d.double(), reference)

    diff = check(run)
    tile_runs = with_forced_tiles(run, tiles, check)
    k_sum = sum(ks)
    a_dense = torch.empty(m, k_sum, device="cuda").to(torch.float8_e4m3fn)
    b_dense = torch.empty(n, k_sum, device="cuda").to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda")
    unscaled = lambda: torch._scaled_mm(a_dense, b_dense.t(), one, one, out_dtype=torch.bfloat16)  # noqa: E731
    times = paired_times_us([run, unscaled] + [forced_run for forced_run, _ in tile_runs.values()], flush)
    t_fgemm, t_cublas = times[:2]
    flops = 2 * m * n * k_sum
    result = {"shape": f"{groups}x{m}x{n} K={k_sum}", "diff": diff, "fgemm_us": t_fgemm, "cublaslt_us": t_cublas,
              "fgemm_tflops": flops / t_fgemm / 1e6, "deepgemm_tflops": row["deepgemm_tflops"],
              "vs_deepgemm": flops / t_fgemm / 1e6 / row["deepgemm_tflops"], "vs_cublaslt": t_cublas / t_fgemm}
    add_tile_times(result, tile_runs, times[2:])
    return result


def print_table(title, rows):
    with_1d2d = all("fgemm_1d2d_us" in r for r in rows)
    extra_head = " fgemm 1D2D µs | 1D2D × DeepGEMM |" if with_1d2d else ""
    head = "| shape | fgemm µs | TFLOPS | DeepGEMM TFLOPS | × DeepGEMM | × cuBLASLt unscaled | calc_diff |"
    print(f"\n{title}\n{head}{extra_head}")
    print("| --- " * (7 + 2 * with_1d2d) + "|")
    for r in rows:
        extra = f" {r['fgemm_1d2d_us']:.1f} | {r['fgemm_1d2d_vs_deepgemm']:.2f} |" if with_1d2d else ""
        print(f"| {r['shape']} | {r['fgemm_us']:.1f} | {r['fgemm_tflops']:.0f} | {r['deepgemm_tflops']} | "
              f"{r['vs_deepgemm']:.2f} | {r['vs_cublaslt']:.2f} | {r['diff']:.1e} |" + extra)
    print(f"geomean × DeepGEMM {geomean([r['vs_deepgemm'] for r in rows]):.3f}, lowest "
          f"{min(r['vs_deepgemm'] for r in rows):.3f}")
    if with_1d2d:
        print(f"fgemm's 1D2D on the same shapes × DeepGEMM: geomean "
              f"{geomean([r['fgemm_1d2d_vs_deepgemm'] for r in rows]):.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", help="write the rows to this file")
    parser.add_argument("--quick", action="store_true", help="the first two rows of each table")
    parser.add_argument("--tiles", nargs="*", default=[], metavar="MxN",
                        help="also time each row with these tiles forced (BLOCK_M x BLOCK_N)")
    args = parser.parse_args()
    tiles = [tuple(int(v) for v in tile.split("x")) for tile in args.tiles]
    anchors = json.loads(ANCHORS.read_text())
    normal = [r for r in anchors["fp8_normal"] if r["recipe"] == "1D1D"]
    k_grouped = anchors["fp8_k_grouped_contiguous"]
    if args.quick:
        normal, k_grouped = normal[:2], k_grouped[:2]
    flush = rested_flush_buffer()
    gen = torch.Generator(device="cuda").manual_seed(0)
    results = {"normal": [normal_row(r, flush, gen, tiles) for r in normal],
               "k_grouped": [k_grouped_row(r, flush, gen, tiles) for r in k_grouped],
               "gpu": torch.cuda.get_device_name()}
    for fp32 in (True, False):
        print_table(f"1D1D, {'FP32 out accumulating in place' if fp32 else 'BF16 out'}",
                    [r for r in results["normal"] if r["shape"].endswith("fp32") == fp32])
    print_table("k-grouped 1D1D, FP32 accumulating in place", results["k_grouped"])
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    worst = max(max([r["diff"], *r["tiles_diff"].values()]) for rows in (results["normal"], results["k_grouped"])
                for r in rows)
    return 1 if not math.isfinite(worst) or worst >= MAX_DIFF else 0


if __name__ == "__main__":
    sys.exit(main())
