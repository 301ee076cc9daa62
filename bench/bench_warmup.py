"""The warm-up of the seed table's GEMMs: every kernel of its (N, K) pairs (normal, contiguous, and masked with
each of its group counts) for M from 1 to 16384, compiled cold in a fresh process and disk cache, then found
in that cache by a second process. Prints the kernels and the seconds of each process's fgemm.warmup.

    python bench/bench_warmup.py [--threads N] [--no-load] [--m-max 16384]
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
import json, sys, time, fgemm
shapes, m_max, threads, load = json.loads(sys.argv[1])
start = time.perf_counter()
kernels = fgemm.warmup([tuple(s) for s in shapes], (1, m_max), threads=threads, load=load)
print(json.dumps({"seconds": time.perf_counter() - start, "kernels": len(kernels),
                  "compiled": sum(k.compiled for k in kernels)}))
"""


def seed_shapes():
    """(op, n, k[, groups]) of every distinct GEMM of the seed table."""
    table = load_table("seed")
    shapes = {("fp8_gemm_nt", row["n"], row["k"]) for row in table["normal"]}
    shapes |= {("m_grouped_fp8_gemm_nt_contiguous", row["n"], row["k"]) for row in table["m_grouped_contiguous"]}
    shapes |= {("m_grouped_fp8_gemm_nt_masked", row["n"], row["k"], row["groups"])
               for row in table["m_grouped_masked"]}
    return sorted(shapes)


def warm(shapes, m_max, threads, load, cache_dir):
    env = dict(os.environ, FGEMM_CACHE_DIR=cache_dir)
    done = subprocess.run([sys.executable, "-c", PROGRAM, json.dumps([shapes, m_max, threads, load])], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=0, help="compiler threads (0: one per core)")
    parser.add_argument("--no-load", action="store_true", help="only fill the disk cache (no GPU needed)")
    parser.add_argument("--m-max", type=int, default=16384)
    args = parser.parse_args()
    shapes = seed_shapes()
    with tempfile.TemporaryDirectory() as cache_dir:
        cold = warm(shapes, args.m_max, args.threads, not args.no_load, cache_dir)
        cached = warm(shapes, args.m_max, args.threads, not args.no_load, cache_dir)
    print(f"{len(shapes)} GEMM shapes of the seed table, M from 1 to {args.m_max}, {os.cpu_count()} cores, "
          f"{'compile only' if args.no_load else 'compile and load'}")
    print(f"cold:   {cold['kernels']} kernels ({cold['compiled']} compiled) in {cold['seconds']:.2f} s")
    print(f"cached: {cached['kernels']} kernels ({cached['compiled']} compiled) in {cached['seconds']:.2f} s")


if __name__ == "__main__":
    main()
