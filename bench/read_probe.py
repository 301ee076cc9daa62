"""The least time reading each decode shape's bytes takes, under the GEMM benchmarks' protocol (kernel time from the
profiler, the 8 GB flush before every call), beside fgemm's FP8 GEMM of the shape in the same rounds.

Builds bench/read_probe.cu with nvcc into a shared library (needs nvcc and a Hopper GPU) and times its kernels,
which only read: bulk copies into a ring of shared memory (the TMA's unit) and 16-byte vector loads, each over a
few grid sizes and depths. The fastest of them for a shape's bytes_moved is a floor under any GEMM of that shape
(a GEMM must read those bytes and compute as well), and so a ceiling on what a GEMM can reach against DeepGEMM's
figures and against a 1 GiB copy's bandwidth, the two measures of issue 24's decode targets.

It also reads B of three decode shapes as a GEMM's producer loads it: tiles of 16 to 64 rows, walked along K by
the TMA in boxes of one or more K blocks (128 bytes of each row per K block), to show what the boxes' size costs.

    python bench/read_probe.py --json read_probe.json --markdown
    python bench/read_probe.py --markdown-from read_probe.json   # the tables again, no GPU needed
"""
import argparse
import ctypes
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

import fgemm
from fgemm.bench.gpu_timing import paired_times_us, rested_flush_buffer
from fgemm.bench.metrics import geomean
from fgemm.bench.operations import normal_gemm
from fgemm.bench.peaks import gpu_copy_gbps

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_16bit_tables import table  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DECODE_SHAPES = ROOT / "python" / "fgemm" / "bench" / "shapes" / "decode.json"
KIB = 1024

# (name, CTAs per SM, threads per CTA, bulk chunk bytes (0: vector loads), bulk copies in flight per CTA)
READERS = [
    ("bulk 1x12x16K", 1, 32, 16 * KIB, 12),
    ("bulk 1x16x8K", 1, 32, 8 * KIB, 16),
    ("bulk 1x4x16K", 1, 32, 16 * KIB, 4),
    ("bulk 1x8x8K", 1, 32, 8 * KIB, 8),
    ("bulk 1x16x4K", 1, 32, 4 * KIB, 16),
    ("bulk 1x32x2K", 1, 32, 2 * KIB, 32),
    ("bulk 1x16x2K", 1, 32, 2 * KIB, 16),
    ("bulk 2x6x16K", 2, 32, 16 * KIB, 6),
    ("bulk 4x6x8K", 4, 32, 8 * KIB, 6),
    ("vector 2x1024", 2, 1024, 0, 0),
    ("vector 4x512", 4, 512, 0, 0),
    ("vector 8x256", 8, 256, 0, 0),
]


def build(nvcc, out_dir):
    library = Path(out_dir) / "libread_probe.so"
    subprocess.run([nvcc, "-std=c++17", "-O3", "-shared", "-Xcompiler", "-fPIC", "-gencode",
                    "arch=compute_90a,code=sm_90a", f"-I{ROOT / 'kernels'}", str(ROOT / "bench" / "read_probe.cu"),
                    "-o", str(library), "-lcuda"], check=True)
    probe = ctypes.CDLL(str(library))
    probe.read_probe.restype = ctypes.c_int
    probe.read_probe.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_int, ctypes.c_int, ctypes.c_uint,
                                 ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]
    probe.read_probe_boxes.restype = ctypes.c_int
    probe.read_probe_boxes.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_int, ctypes.c_uint,
                                       ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]
    return probe


def reader(probe, src, nbytes, sink, sms, reader_spec):
    """A call that reads the first nbytes of src with one of READERS."""
    _, per_sm, threads, chunk, depth = reader_spec
    ctas = sms * per_sm

    def run():
        error = probe.read_probe(src.data_ptr(), nbytes, ctas, threads, chunk, depth, sink.data_ptr(),
                                 torch.cuda.current_stream().cuda_stream)
        if error != 0:
            raise RuntimeError(f"read_probe {reader_spec[0]}: CUDA error {error}")
    return run


# B's tiles as the GEMM's producer loads them: (rows of a tile, K blocks of 128 bytes per box, boxes in flight).
BOXES = [(16, 1, 16), (16, 2, 8), (16, 4, 4), (16, 4, 8), (16, 8, 4), (32, 1, 16), (32, 2, 8), (32, 4, 4),
         (64, 1, 13), (64, 2, 6)]
BOX_SHAPES = [(2112, 7168), (4096, 7168), (7168, 16384)]


def box_reader(probe, b, sink, sms, rows, k_blocks, depth):
    """A call that reads B [n, k] in tiles of `rows` rows, boxes of `k_blocks` K blocks, one CTA per tile up to an
    SM each."""
    n, k = b.shape
    ctas = min(sms, -(-n // rows))

    def run():
        error = probe.read_probe_boxes(b.data_ptr(), n, k, ctas, rows, k_blocks, depth, sink.data_ptr(),
                                       torch.cuda.current_stream().cuda_stream)
        if error != 0:
            raise RuntimeError(f"read_probe_boxes {rows} rows x {k_blocks} K blocks: error {error} (1000 + a CUresult "
                               "where the tensor map could not be made)")
    return run


def time_boxes(probe, sink, sms, flush):
    """{'N x K': {'rows x K blocks x depth': µs}} for B of each BOX_SHAPES."""
    times_by_shape = {}
    for n, k in BOX_SHAPES:
        b = torch.randint(-128, 127, (n, k), dtype=torch.int8, device="cuda")
        readers = {f"{rows}x{k_blocks}x{depth}": box_reader(probe, b, sink, sms, rows, k_blocks, depth)
                   for rows, k_blocks, depth in BOXES}
        times = paired_times_us(list(readers.values()), flush, rounds=2, warmup=2, repeats=10)
        times_by_shape[f"{n}x{k}"] = dict(zip(readers, times))
        print(f"B {n} x {k} ({n * k / 1e6:.1f} MB), tiles of rows x K blocks per box x boxes in flight: " +
              " | ".join(f"{name} {us:.1f}" for name, us in times_by_shape[f"{n}x{k}"].items()), flush=True)
    return times_by_shape


def markdown(result):
    """The probe's tables for docs/PERFORMANCE.md, from what main() measured (or --json wrote): each decode shape's
    fastest read beside fgemm and DeepGEMM's figure, every reader on the M = 1 shapes of N = 2112 and 7168, the
    TMA boxes of B, and the summary."""
    rows, summary, boxes = result["rows"], result["summary"], result["boxes"]
    bulk = [name for name in rows[0]["read_times"] if name.startswith("bulk")]
    shapes = table(["M", "N", "K", "MB", "DeepGEMM µs (table)", "its time / 1.25", "fgemm µs",
                    "fastest read µs (reader)", "fastest bulk read µs", "fastest read: fraction of copy bandwidth",
                    "fgemm / fastest read"],
                   [[str(r["m"]), str(r["n"]), str(r["k"]), f"{r['bytes'] / 1e6:.1f}", f"{r['deepgemm_us']:.1f}",
                     f"{r['deepgemm_us'] / 1.25:.1f}", f"{r['fgemm_us']:.1f}", f"{r['read_us']:.1f} ({r['reader']})",
                     f"{min(r['read_times'][name] for name in bulk):.1f}", f"{r['read_fraction_of_copy']:.2f}",
                     f"{r['read_us'] / r['fgemm_us']:.2f}"] for r in rows])
    some = [r for r in rows if r["m"] == 1 and r["n"] in (2112, 7168)]
    readers = table(["reader"] + [f"{r['m']} x {r['n']} x {r['k']} ({r['bytes'] / 1e6:.1f} MB)" for r in some],
                    [[name] + [f"{r['read_times'][name]:.1f}" for r in some] for name in rows[0]["read_times"]])
    box_names = list(next(iter(boxes.values())))
    box_table = table(["tile rows x K blocks per box x boxes in flight"] +
                      [f"B {shape.replace('x', ' x ')}" for shape in boxes],
                      [[name.replace("x", " x ")] + [f"{boxes[shape][name]:.1f}" for shape in boxes]
                       for name in box_names])
    summary_lines = [f"- {key}: {value:.3f}" if isinstance(value, float) else f"- {key}: {value}"
                     for key, value in summary.items()]
    return "\n\n".join([shapes, readers, box_table, "\n".join(summary_lines)])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nvcc", default="nvcc")
    parser.add_argument("--json", help="write the rows and the summary to this file")
    parser.add_argument("--markdown", action="store_true", help="print the tables for docs/PERFORMANCE.md")
    parser.add_argument("--markdown-from", metavar="JSON", help="print the tables of a run that --json wrote, and stop")
    args = parser.parse_args()
    if args.markdown_from:
        print(markdown(json.loads(Path(args.markdown_from).read_text())))
        return 0
    if not torch.cuda.is_available():
        sys.exit("read_probe.py: needs a CUDA device")
    shapes = json.loads(DECODE_SHAPES.read_text())["normal"]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    flush = rested_flush_buffer()
    copy_gbps = gpu_copy_gbps(flush)
    largest = max(shape["bytes_moved"] for shape in shapes)
    src = torch.randint(-128, 127, ((largest + 15) // 16 * 16,), dtype=torch.int8, device="cuda")
    sink = torch.zeros(1, dtype=torch.int32, device="cuda")
    with tempfile.TemporaryDirectory() as tmp:
        probe = build(args.nvcc, tmp)
        # The fixed cost of a kernel under the protocol: reading 16 bytes, with the ring of shared memory of
        # the first bulk reader (which a GEMM's stages resemble) and with vector loads.
        empty_bulk_us, empty_vector_us = paired_times_us(
            [reader(probe, src, 16, sink, sms, READERS[0]), reader(probe, src, 16, sink, sms, READERS[-1])], flush)
        print(f"{torch.cuda.get_device_name()}, {sms} SMs; 1 GiB copy {copy_gbps:.0f} GB/s; a read of 16 bytes "
              f"{empty_bulk_us:.1f} us ({READERS[0][0]}), {empty_vector_us:.1f} us ({READERS[-1][0]})", flush=True)
        boxes = time_boxes(probe, sink, sms, flush)
        rows = []
        for shape in shapes:
            m, n, k, nbytes = shape["m"], shape["n"], shape["k"], (shape["bytes_moved"] + 15) // 16 * 16
            *_, run_gemm = normal_gemm(m, n, k, "cuda", True)
            run_gemm()
            readers = [reader(probe, src, nbytes, sink, sms, spec) for spec in READERS]
            times = paired_times_us([run_gemm] + readers, flush, rounds=2, warmup=2, repeats=10)
            gemm_us, read_times = times[0], dict(zip((spec[0] for spec in READERS), times[1:]))
            best = min(read_times, key=read_times.get)
            read_us = read_times[best]
            row = dict(m=m, n=n, k=k, bytes=nbytes, deepgemm_us=shape["h100_deepgemm_us"], fgemm_us=gemm_us,
                       read_us=read_us, reader=best, read_times=read_times,
                       read_fraction_of_copy=nbytes / read_us / 1e3 / copy_gbps,
                       fgemm_fraction_of_copy=nbytes / gemm_us / 1e3 / copy_gbps)
            rows.append(row)
            print(f"{m:>4} x {n:>6} x {k:>6}: {nbytes / 1e6:6.1f} MB | DeepGEMM {row['deepgemm_us']:6.1f} us "
                  f"(1.25x: {row['deepgemm_us'] / 1.25:6.1f}) | fgemm {gemm_us:6.1f} | read {read_us:6.1f} ({best}) "
                  f"| read {row['read_fraction_of_copy']:.2f} of copy, fgemm {row['fgemm_fraction_of_copy']:.2f}",
                  flush=True)
    summary = dict(
        gpu=torch.cuda.get_device_name(), copy_gbps=copy_gbps, read_16_bytes_bulk_us=empty_bulk_us,
        read_16_bytes_vector_us=empty_vector_us,
        read_vs_deepgemm_geomean=geomean([r["deepgemm_us"] / r["read_us"] for r in rows]),
        read_vs_deepgemm_min=min(r["deepgemm_us"] / r["read_us"] for r in rows),
        read_fraction_of_copy_geomean=geomean([r["read_fraction_of_copy"] for r in rows]),
        fgemm_vs_deepgemm_geomean=geomean([r["deepgemm_us"] / r["fgemm_us"] for r in rows]),
        fgemm_fraction_of_copy_geomean=geomean([r["fgemm_fraction_of_copy"] for r in rows]),
        fgemm_fraction_of_read_geomean=geomean([r["read_us"] / r["fgemm_us"] for r in rows]))
    result = dict(rows=rows, summary=summary, boxes=boxes)
    for key, value in summary.items():
        print(f"- {key}: {value:.3f}" if isinstance(value, float) else f"- {key}: {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    if args.markdown:
        print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
