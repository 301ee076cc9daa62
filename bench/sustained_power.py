"""Sustained load: each GEMM runs back to back for some seconds while nvidia-smi samples the SM clock and the
board's power every 100 ms. An H100 under FP8 GEMMs reaches its power limit (700 W on an H100 SXM) and lowers
its clock, so sustained TFLOPS follow the work done per clock cycle, printed here as TFLOPS per GHz.

    python bench/sustained_power.py [--seconds 3]

fgemm is run under several forced tile shapes and beside cuBLASLt block-wise (once per expert) on two grouped
seed shapes, with sfa MN-major (bench_gpu.py's default).
"""

import argparse
import datetime
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

import fgemm

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_gpu  # noqa: E402

CASES = [("contiguous", 4, 8192, 4096, 7168), ("masked", 1, 1024, 4096, 7168)]
TILES = [(128, 128, 1, 1), (64, 256, 1, 1), (128, 256, 1, 1), (128, 256, 1, 2)]


def clock_samples(log, start, end):
    """(SM clock MHz, power W) samples of the nvidia-smi log taken between two time.time() values, leaving out
    the first quarter of the window (the clock settling under the new load)."""
    samples = []
    for line in log.read_text().splitlines():
        fields = [field.strip() for field in line.split(",")]
        try:
            stamp = datetime.datetime.strptime(fields[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            if start + (end - start) / 4 <= stamp <= end:
                samples.append((float(fields[1]), float(fields[2])))
        except (IndexError, ValueError):
            continue
    return samples


def sustained_us(fn, seconds):
    """Mean time of fn() in microseconds over calls back to back for `seconds`, and the wall-clock window."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start = time.time()
    begin.record()
    calls = 0
    while time.time() - start < seconds:
        for _ in range(10):
            fn()
        calls += 10
        torch.cuda.synchronize()
    end.record()
    torch.cuda.synchronize()
    return begin.elapsed_time(end) * 1e3 / calls, start, time.time()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="run time of each GEMM")
    parser.add_argument("--log", default="gpu_clocks.csv", help="where nvidia-smi's samples go")
    args = parser.parse_args()
    log = Path(args.log)
    with open(log, "w") as out:
        sampler = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw",
                                    "--format=csv,noheader,nounits", "-lms", "100"], stdout=out)
    try:
        print(f"GPU: {torch.cuda.get_device_name()}; sustained {args.seconds} s per GEMM, sfa MN-major")
        for kind, groups, m, n, k in CASES:
            run_fgemm, _, run_cublas = bench_gpu.grouped_gemm(kind, *bench_gpu.grouped_operands(groups, m, n, k))
            flops = 2 * groups * m * n * k
            for label, tile, fn in [(f"fgemm {t[0]}x{t[1]} c{t[2]}x{t[3]}", t, run_fgemm) for t in TILES] + \
                    [("cuBLASLt per expert", None, run_cublas)]:
                if tile:
                    fgemm._C._force_config(*tile)
                try:
                    us, start, end = sustained_us(fn, args.seconds)
                finally:
                    fgemm._C._force_config(0, 0)
                time.sleep(1.5)  # the last samples of the window reach the log
                samples = clock_samples(log, start, end)
                tflops = flops / us / 1e6
                clock = statistics.median(s[0] for s in samples) if samples else float("nan")
                power = statistics.median(s[1] for s in samples) if samples else float("nan")
                print(f"{kind:>10} {groups}x{m}x{n}x{k} {label:>20}: {us:8.1f} us {tflops:6.0f} TFLOPS | SM clock "
                      f"{clock:5.0f} MHz, {power:4.0f} W | {tflops / clock * 1e3:5.0f} TFLOPS per GHz", flush=True)
    finally:
        sampler.terminate()


if __name__ == "__main__":
    main()
