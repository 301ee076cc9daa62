"""python -m fgemm: runs one FP8 GEMM and checks it.

Quantizes random A [M, K] per 1x128 block and B [N, K] per 128x128 block, runs D = A @ B^T on the GPU when
torch sees one (else on the CPU), and prints the shape, the backend, the median time, the TFLOPS and
calc_diff against an FP64 reference computed from the dequantised inputs. Exits with status 1 when calc_diff
exceeds 1e-3, the bound of ARCHITECTURE.md (Semantics).
"""

import argparse
import statistics
import sys
import time

import torch

import fgemm
from fgemm.quantize import per_block_dequantize, per_token_dequantize

MAX_CALC_DIFF = 1e-3
OUT_DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}
# (M, N, K) by device: a DeepSeek-V3 projection on the GPU, something that takes seconds on a laptop CPU.
DEFAULT_SHAPES = {"cuda": (4096, 7168, 7168), "cpu": (256, 2048, 2048)}


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m fgemm", description=__doc__.split("\n\n")[1])
    parser.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto",
                        help="auto: cuda when torch.cuda.is_available(), else cpu")
    parser.add_argument("--m", type=int, help="rows of A and D (default: 4096 on the GPU, 256 on the CPU)")
    parser.add_argument("--n", type=int, help="rows of B, columns of D (default: 7168 / 2048)")
    parser.add_argument("--k", type=int, help="the reduced dimension, a multiple of 16 (default: 7168 / 2048)")
    parser.add_argument("--out", choices=OUT_DTYPES, default="bf16", help="dtype of D (default: bf16)")
    parser.add_argument("--runs", type=int, default=10, help="timed runs after one warm-up (default: 10)")
    args = parser.parse_args(argv)
    if args.device == "auto":
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    for name, default in zip("mnk", DEFAULT_SHAPES[args.device]):
        if getattr(args, name) is None:
            setattr(args, name, default)
    return args


def backend_name(device):
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    isa, threads = fgemm._C.cpu_backend()
    return f"cpu ({isa}, {threads} threads)"


def median_seconds(gemm, device, runs):
    """Median wall time of one call; on the GPU, measured with events around each call."""
    gemm()  # warm-up: compiles the kernel on the GPU, starts the threads on the CPU
    times = []
    for _ in range(runs):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            gemm()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        else:
            start = time.perf_counter()
            gemm()
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None):
    args = parse_args(argv)
    device = torch.device(args.device)
    gen = torch.Generator(device=device).manual_seed(0)
    a, sfa = fgemm.per_token_cast_to_fp8(torch.randn(args.m, args.k, device=device, generator=gen))
    b, sfb = fgemm.per_block_cast_to_fp8(torch.randn(args.n, args.k, device=device, generator=gen))
    sfa = fgemm.get_mn_major_tma_aligned_tensor(sfa)
    d = torch.empty(args.m, args.n, dtype=OUT_DTYPES[args.out], device=device)

    seconds = median_seconds(lambda: fgemm.fp8_gemm_nt((a, sfa), (b, sfb), d), device, args.runs)
    reference = per_token_dequantize(a, sfa, torch.float64) @ per_block_dequantize(b, sfb, torch.float64).T
    diff = fgemm.calc_diff(d, reference)

    print(f"shape      M={args.m} N={args.n} K={args.k}, D {args.out}")
    print(f"backend    {backend_name(device)}")
    print(f"time       {seconds * 1e3:.3f} ms (median of {args.runs})")
    print(f"TFLOPS     {2 * args.m * args.n * args.k / seconds / 1e12:.3f}")
    verdict = "ok" if diff <= MAX_CALC_DIFF else f"FAILED: above {MAX_CALC_DIFF:g}"
    print(f"calc_diff  {diff:.3g} against FP64 on the dequantised inputs ({verdict})")
    return 0 if diff <= MAX_CALC_DIFF else 1


if __name__ == "__main__":
    sys.exit(main())
