"""The warm-up of a table's GEMMs, every kernel of M from 1 to 16384, compiled cold in a fresh process and disk
cache, then found in that cache by a second process. Prints the kernels and the seconds of each process's
fgemm.warmup. The tables: the FP8 seed table's (N, K) pairs (normal, contiguous, and masked with each of its
group counts), or, with --kind bf16, the BF16 anchors' GEMMs (bf16_normal's layouts, output types and C of D's
type, and the m-grouped contiguous layouts).

    python bench/bench_warmup.py [--kind fp8|bf16] [--threads N] [--no-load] [--m-max 16384]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

from fgemm.bench.tables import load_table

# Run in a fresh process, so that no kernel is loaded already: the warm-up and its wall time, as JSON.
PROGRAM = """
import json, sys, time, fgemm, torch
shapes, m_max, threads, load = json.loads(sys.argv[1])
for shape in shapes:
    shape["out_dtype"] = getattr(torch, shape["out_dtype"])
start = time.perf_counter()
kernels = fgemm.warmup(shapes, (1, m_max), threads=threads, load=load)
print(json.dumps({"seconds": time.perf_counter() - start, "kernels": len(kernels),
                  "compiled": sum(k.compiled for k in kernels)}))
"""


def shape(op, n, k, groups=1, out_dtype="bfloat16", with_c=False):
    """A warm-up shape as fgemm.warmup takes it, with D's dtype by its torch name (JSON for the child process)."""
    return {"op": op, "n": n, "k": k, "num_groups": groups, "out_dtype": out_dtype, "with_c": with_c}


def seed_shapes():
    """Every distinct GEMM of the FP8 seed table."""
    table = load_table("seed")
    shapes = {("fp8_gemm_nt", row["n"], row["k"], 1) for row in table["normal"]}
    shapes |= {("m_grouped_fp8_gemm_nt_contiguous", row["n"], row["k"], 1) for row in table["m_grouped_contiguous"]}
    shapes |= {("m_grouped_fp8_gemm_nt_masked", row["n"], row["k"], row["groups"])
               for row in table["m_grouped_masked"]}
    return [shape(*s) for s in sorted(shapes)]


def bf16_shapes():
    """Every distinct GEMM of the BF16 anchors, as their rows run it: D of the row's type, and C of D's type where a
    BF16 row accumulates (an FP32 D accumulated in place is not a warm-up shape), and the m-grouped contiguous
    layouts."""
    table = load_table("precision_anchors")
    shapes = {(f"bf16_gemm_{row['layout'].lower()}", row["n"], row["k"], 1,
               "float32" if row["out"] == "fp32" else "bfloat16", row["accumulate"] and row["out"] != "fp32")
              for row in table["bf16_normal"]}
    shapes |= {(f"m_grouped_bf16_gemm_{row['layout'].lower()}_contiguous", row["n"], row["k"], 1, "bfloat16", False)
               for row in table["bf16_m_grouped_contiguous"]}
    return [shape(*s) for s in sorted(shapes)]


def warm(shapes, m_max, threads, load, cache_dir):
    env = dict(os.environ, FGEMM_CACHE_DIR=cache_dir)
    done = subprocess.run([sys.executable, "-c", PROGRAM, json.dumps([shapes, m_max, threads, load])], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kind", choices=["fp8", "bf16"], default="fp8",
                        help="the FP8 seed table's GEMMs, or the BF16 anchors'")
    parser.add_argument("--threads", type=int, default=0, help="compiler threads (0: one per core)")
    parser.add_argument("--no-load", action="store_true", help="only fill the disk cache (no GPU needed)")
    parser.add_argument("--m-max", type=int, default=16384)
    args = parser.parse_args()
    shapes = seed_shapes() if args.kind == "fp8" else bf16_shapes()
    with tempfile.TemporaryDirectory() as cache_dir:
        cold = warm(shapes, args.m_max, args.threads, not args.no_load, cache_dir)
        cached = warm(shapes, args.m_max, args.threads, not args.no_load, cache_dir)
    table = "the seed table" if args.kind == "fp8" else "the BF16 anchors"
    print(f"{len(shapes)} GEMM shapes of {table}, M from 1 to {args.m_max}, {os.cpu_count()} cores, "
          f"{'compile only' if args.no_load else 'compile and load'}")
    print(f"cold:   {cold['kernels']} kernels ({cold['compiled']} compiled) in {cold['seconds']:.2f} s")
    print(f"cached: {cached['kernels']} kernels ({cached['compiled']} compiled) in {cached['seconds']:.2f} s")


if __name__ == "__main__":
    main()
