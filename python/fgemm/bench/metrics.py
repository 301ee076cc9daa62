"""What a row's times mean: FLOPs and bytes of a shape, throughput, ratios and the roofline."""

import math

BLOCK = 128


def gemm_flops(groups, m, n, k):
    return 2 * groups * m * n * k


def gemm_bytes(groups, m, n, k):
    """The least a GEMM of `groups` [m, k] x [n, k]^T products must move: A and B in FP8, D in BF16, the 1x128
    scales of A and the 128x128 scales of B in FP32."""
    k_blocks = math.ceil(k / BLOCK)
    per_group = m * k + n * k + 2 * m * n + 4 * m * k_blocks + 4 * math.ceil(n / BLOCK) * k_blocks
    return groups * per_group


def quantize_bytes(rows, k, rows_per_scale):
    """A quantizer's traffic: BF16 in, FP8 codes out, one FP32 scale per rows_per_scale x 128 block."""
    return rows * k * 3 + 4 * math.ceil(rows / rows_per_scale) * math.ceil(k / BLOCK)


def derive(row, unit, peaks):
    """Fills in a row's throughput per side, fgemm's speed-up over each baseline (its time / fgemm's), and
    where fgemm stands against the roofline of `peaks`: for a GEMM the lesser of the compute peak and what the
    bandwidth allows for the shape's bytes (its arithmetic intensity times the bandwidth); for a quantizer,
    which does no arithmetic to speak of, the bandwidth."""
    times = row["us"]
    if unit == "TFLOPS":
        row["throughput"] = {side: row["flops"] / us / 1e6 if us else None for side, us in times.items()}
        row["intensity"] = row["flops"] / row["bytes"]
        memory_bound = row["intensity"] * peaks["gbps"] / 1e3
        row["bound"] = "memory" if memory_bound < peaks["tflops"] else "compute"
        row["roofline"] = min(memory_bound, peaks["tflops"])
    else:
        row["throughput"] = {side: row["bytes"] / us / 1e3 if us else None for side, us in times.items()}
        row["bound"] = "memory"
        row["roofline"] = peaks["gbps"]
    row["speedup"] = {side: us / times["fgemm"] if us else None for side, us in times.items() if side != "fgemm"}
    row["roofline_fraction"] = row["throughput"]["fgemm"] / row["roofline"]
    return row


def geomean(values):
    values = [value for value in values if value]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None
