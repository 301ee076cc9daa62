"""GPU benchmark of the quantization kernels against the device's copy bandwidth and the torch-op chains they
replace.

For each M x K (BF16 input): the kernel's time (the kernel's duration from the profiler, L2 flushed before every
call by zeroing a 256 MB buffer, median of many calls after warm-up), its bandwidth (bytes read + written) as a
fraction of the copy bandwidth measured in the same run (a torch copy of a large tensor) and of a copy moving the
same bytes, and the time of the torch-op chain (its kernels' durations, summed). Kernels:
per_token_cast_to_fp8 with row-major and with MN-major scales, per_block_cast_to_fp8 (M as N),
get_mn_major_tma_aligned_tensor of the per-token scales, and the INT8 quantizers: per_token_cast_to_int8 (one
scale per row, as per_channel_cast_to_int8), per_token_group_cast_to_int8 (groups of 128) and per_block_cast_to_int8,
each against the torch chain of its reference arithmetic (tests/python/quantize_int8_reference.py). Then FP8
training's cast-transpose at DeepSeek-V3's shapes (M tokens x K = 2048 or 7168, MN-major scales) and its grouped
form over eight experts (their counts multiples of 128, and not: each expert then padded to whole blocks in the
outputs, against the chain that pads x first), against the chains of per_token_cast_to_fp8 of x and of each
transpose; its bytes are x read once (BF16), both sets of codes and both sets of scales. Last, the weights'
cast-transpose (per_block_cast_transpose_to_fp8) of DeepSeek-V3's dense weights and of stacks of its experts', against
per_block_cast_to_fp8 followed by torch's copy of the transposed codes and scales (what the FP8 layers did before
it).

    python bench/bench_quant.py [--shapes quantize|FILE.json] [--json out.json]
"""

import argparse
import json
import math
import sys
from pathlib import Path

import torch

import fgemm
from fgemm.bench import tables
from fgemm.bench.baselines import torch_per_block
from fgemm.bench.gpu_timing import L2_FLUSH_BYTES, kernel_time_us
from fgemm.bench.metrics import quantize_bytes
from fgemm.bench.peaks import gpu_copy_gbps

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
import quantize_int8_reference as int8_reference  # noqa: E402
from quantize_reference import (  # noqa: E402
    assert_same_codes,
    assert_same_scales,
    cast_transpose,
    deepgemm_per_token,
    grouped_cast_transpose,
    padded_to_blocks,
)

# The cast-transpose's shapes: tokens x hidden sizes of DeepSeek-V3 (7168, and 2048 of an expert's intermediate).
CAST_TRANSPOSE_SHAPES = [(m, k) for m in (4096, 16384) for k in (2048, 7168)]
# Eight experts' token counts (multiples of 128, one empty), 16384 tokens in all; and as a router leaves them,
# not multiples of 128 (each expert padded to whole blocks in the outputs).
GROUPED_KS = [2048, 3072, 1024, 0, 4096, 2048, 1536, 2560]
ROUTED_KS = [1990, 3100, 1000, 30, 4090, 2111, 1500, 2563]
# Weights [N, K] and stacks of experts' weights [G, N, K]: dense layers, and 8 or 32 experts' gate-and-up
# projections (4096 x 7168) and down projections (7168 x 2048).
WEIGHT_SHAPES = [(1, 2112, 7168), (1, 4096, 7168), (1, 7168, 2048), (8, 4096, 7168), (8, 7168, 2048),
                 (32, 4096, 7168), (32, 7168, 2048)]


def torch_mn_major(sf):
    """The torch-op copy get_mn_major_tma_aligned_tensor replaces."""
    m, kb = sf.shape
    aligned = torch.empty(kb, fgemm.get_tma_aligned_size(m, 4), device=sf.device).t()[:m]
    return aligned.copy_(sf)


def torch_per_token_mn_major(x):
    """The torch-op chains per_token_cast_to_fp8(x, mn_major_scales=True) replaces."""
    codes, scales = deepgemm_per_token(x)
    return codes, torch_mn_major(scales)


def same_bits(kernel_result, chain_result):
    """Whether the kernel's result (codes and scales, pairs of them, or scales) has the bits of the chain's, NaN
    matching NaN."""
    try:
        if isinstance(kernel_result, tuple):
            for codes in range(0, len(kernel_result), 2):
                int8 = kernel_result[codes].dtype == torch.int8
                (int8_reference.assert_same_codes if int8 else assert_same_codes)(kernel_result[codes],
                                                                                  chain_result[codes])
                assert_same_scales(kernel_result[codes + 1], chain_result[codes + 1])
        else:
            assert_same_scales(kernel_result, chain_result)
    except AssertionError:
        return False
    return True


def per_block_then_copied_transposed(w):
    """The chain per_block_cast_transpose_to_fp8 replaces: per_block_cast_to_fp8, then torch's copies of the codes
    and of the scales transposed."""
    codes, scales = fgemm.per_block_cast_to_fp8(w)
    return (codes, scales, codes.transpose(-1, -2).contiguous(), scales.transpose(-1, -2).contiguous())


def weight_cast_transpose_bytes(g, n, k):
    """A weight's cast-transpose's traffic: w read once (BF16), both sets of codes and both sets of scales."""
    return g * (n * k * 2 + 2 * n * k + 2 * 4 * math.ceil(n / 128) * math.ceil(k / 128))


def cast_transpose_bytes(m, k):
    """The cast-transpose's traffic: x read once (BF16), the codes of x and of its transpose, both sets of scales."""
    return m * k * 2 + 2 * m * k + 4 * (m * math.ceil(k / 128) + k * math.ceil(m / 128))


def measure(name, m, k, bytes_moved, kernel, chain, copy_gbps, flush):
    kernel_us = kernel_time_us(kernel, flush, warmup=10, repeats=100)
    chain_us = kernel_time_us(chain, flush, warmup=10, repeats=100)
    gbps = bytes_moved / kernel_us / 1e3
    same_size_copy_gbps = gpu_copy_gbps(flush, bytes_moved)
    same = same_bits(kernel(), chain())
    row = dict(kernel=name, m=m, k=k, bytes=bytes_moved, kernel_us=kernel_us, kernel_gbps=gbps,
               fraction_of_copy=gbps / copy_gbps, fraction_of_same_size_copy=gbps / same_size_copy_gbps,
               torch_chain_us=chain_us, speedup=chain_us / kernel_us, same_bits_as_chain=same)
    print(f"{name:<28} {m:>6} {k:>5} | {kernel_us:9.2f} us {gbps:7.0f} GB/s {100 * gbps / copy_gbps:5.1f}% of copy "
          f"{100 * gbps / same_size_copy_gbps:5.1f}% of a same-size copy | torch chain {chain_us:9.2f} us  "
          f"x{chain_us / kernel_us:6.1f} | same bits: {same}", flush=True)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="quantize",
                        help="the M x K shapes: a built-in table of fgemm.bench or a JSON file with a 'quantize' "
                             "section (default: %(default)s)")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()
    shapes = tables.section_entries(tables.load_table(args.shapes), "per_token", "fp8", args.shapes)
    if not shapes:
        parser.error(f"--shapes {args.shapes}: the table has no 'quantize' section")

    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    copy_gbps = gpu_copy_gbps(flush)
    print(f"{torch.cuda.get_device_name()}: copy bandwidth {copy_gbps:.0f} GB/s (read + write)")
    rows = []
    for shape in shapes:
        m, k = shape["m"], shape["k"]
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        kb = math.ceil(k / 128)
        token_bytes = quantize_bytes(m, k, rows_per_scale=1)
        rows.append(measure("per_token", m, k, token_bytes, lambda: fgemm.per_token_cast_to_fp8(x),
                            lambda: deepgemm_per_token(x), copy_gbps, flush))
        rows.append(measure("per_token_mn_major", m, k, token_bytes,
                            lambda: fgemm.per_token_cast_to_fp8(x, mn_major_scales=True),
                            lambda: torch_per_token_mn_major(x), copy_gbps, flush))
        block_bytes = quantize_bytes(m, k, rows_per_scale=128)
        rows.append(measure("per_block", m, k, block_bytes, lambda: fgemm.per_block_cast_to_fp8(x),
                            lambda: torch_per_block(x), copy_gbps, flush))
        sf = torch.rand(m, kb, device="cuda")
        rows.append(measure("mn_major_scales", m, k, 2 * m * kb * 4,
                            lambda: fgemm.get_mn_major_tma_aligned_tensor(sf), lambda: torch_mn_major(sf),
                            copy_gbps, flush))
        # INT8: the same bytes as FP8's codes, one byte each; per row, one scale per row.
        rows.append(measure("per_token_int8", m, k, m * k * 3 + 4 * m, lambda: fgemm.per_token_cast_to_int8(x),
                            lambda: int8_reference.per_row(x), copy_gbps, flush))
        rows.append(measure("per_token_group_int8", m, k, token_bytes,
                            lambda: fgemm.per_token_group_cast_to_int8(x),
                            lambda: int8_reference.per_token_group(x), copy_gbps, flush))
        rows.append(measure("per_block_int8", m, k, block_bytes, lambda: fgemm.per_block_cast_to_int8(x),
                            lambda: int8_reference.per_block(x), copy_gbps, flush))
    for m, k in CAST_TRANSPOSE_SHAPES:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        rows.append(measure("cast_transpose", m, k, cast_transpose_bytes(m, k),
                            lambda: fgemm.cast_transpose_to_fp8(x), lambda: cast_transpose(x), copy_gbps, flush))
    for k in (2048, 7168):
        m = sum(GROUPED_KS)
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        rows.append(measure("grouped_cast_transpose", m, k, cast_transpose_bytes(m, k),
                            lambda: fgemm.grouped_cast_transpose_to_fp8(x, GROUPED_KS),
                            lambda: grouped_cast_transpose(x, GROUPED_KS), copy_gbps, flush))
    for k in (2048, 7168):
        m = sum(ROUTED_KS)
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        padded_m = sum(math.ceil(count / 128) * 128 for count in ROUTED_KS)
        rows.append(measure("grouped_cast_transpose padded", m, k, m * k * 2 + cast_transpose_bytes(padded_m, k) -
                            padded_m * k * 2, lambda: fgemm.grouped_cast_transpose_to_fp8(x, ROUTED_KS),
                            lambda: grouped_cast_transpose(*padded_to_blocks(x, ROUTED_KS)), copy_gbps, flush))
    for g, n, k in WEIGHT_SHAPES:
        w = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16)
        w = w[0] if g == 1 else w
        rows.append(measure(f"weight_cast_transpose G={g}", n, k, weight_cast_transpose_bytes(g, n, k),
                            lambda: fgemm.per_block_cast_transpose_to_fp8(w),
                            lambda: per_block_then_copied_transposed(w), copy_gbps, flush))
    if args.json:
        Path(args.json).write_text(json.dumps(dict(device=torch.cuda.get_device_name(), copy_gbps=copy_gbps,
                                                   rows=rows), indent=1))


if __name__ == "__main__":
    main()
