"""The machine's roofline, measured: the compute peak (a large matmul) and the memory bandwidth (a large copy)."""

import time

import torch

from .gpu_timing import kernel_time_us

GPU_COPY_BYTES = 1 << 30
GPU_MATMUL_SIZE = 8192
CPU_COPY_BYTES = 256 << 20
CPU_MATMUL_SIZE = 2048


def gpu_copy_gbps(flush, bytes_moved=2 * GPU_COPY_BYTES):
    """Bytes read and written per second by a torch copy moving `bytes_moved` bytes in all (half read, half
    written). Of a 1 GiB tensor: the device's practical bound; of a kernel's own bytes: what a copy of that
    size reaches, launch and ramp-up included."""
    src = torch.empty(max(bytes_moved // 2, 1), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    return 2 * src.numel() / kernel_time_us(lambda: dst.copy_(src), flush, warmup=3, repeats=50) / 1e3


def gpu_matmul_tflops(flush, size=GPU_MATMUL_SIZE):
    """(TFLOPS, what was run) of a size^3 FP8 GEMM with one scale per tensor (torch._scaled_mm: cuBLASLt's
    fastest FP8 path, the tensor cores' practical peak), or of a BF16 torch.matmul where this GPU or torch
    build has no FP8 GEMM."""
    a = torch.randn(size, size, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(size, size, device="cuda").to(torch.float8_e4m3fn).t()
    one = torch.ones((), device="cuda")
    run, what = (lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
                 f"torch._scaled_mm FP8 {size}³, per-tensor scales")
    try:
        run()
    except RuntimeError:
        a16, b16 = a.to(torch.bfloat16), b.to(torch.bfloat16)
        run, what = lambda: a16 @ b16, f"torch.matmul BF16 {size}³ (no FP8 GEMM in this torch build)"
    return 2 * size**3 / kernel_time_us(run, flush, warmup=3, repeats=20) / 1e6, what


def gpu_peaks(flush):
    tflops, tflops_how = gpu_matmul_tflops(flush)
    return dict(tflops=tflops, tflops_how=tflops_how, gbps=gpu_copy_gbps(flush),
                gbps_how=f"torch copy of {GPU_COPY_BYTES >> 20} MiB (bytes read + written)")


def best_seconds(fn, repeats):
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def cpu_peaks(size=CPU_MATMUL_SIZE, copy_bytes=CPU_COPY_BYTES):
    """The faster of an FP32 and a BF16 torch.matmul of size^3 (fgemm's CPU kernels multiply in BF16 or FP32),
    and a torch copy of copy_bytes; best of a few runs each."""
    rates = {}
    for dtype in (torch.float32, torch.bfloat16):
        a, b = torch.randn(size, size).to(dtype), torch.randn(size, size).to(dtype)
        rates[dtype] = 2 * size**3 / best_seconds(lambda: a @ b, repeats=5) / 1e12
    fastest = max(rates, key=rates.get)
    src = torch.empty(copy_bytes, dtype=torch.uint8)
    dst = torch.empty_like(src)
    gbps = 2 * copy_bytes / best_seconds(lambda: dst.copy_(src), repeats=8) / 1e9
    return dict(tflops=rates[fastest], tflops_how=f"torch.matmul {str(fastest).removeprefix('torch.')} {size}³",
                gbps=gbps, gbps_how=f"torch copy of {copy_bytes >> 20} MiB (bytes read + written)")
