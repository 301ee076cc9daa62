"""GPU benchmark of a training step of fgemm.nn.Linear (FP8) against torch.nn.Linear (BF16) at DeepSeek-V3's
shapes.

    python bench/bench_fp8_training.py [--json out.json] [--tokens 4096 16384] [--breakdown]
    python bench/bench_fp8_training.py --dry-run        the plumbing on tiny CPU tensors

A step is y = layer(x) then y.backward(dy): three GEMMs on each side (the forward, the input gradient and the
weight gradient, 6 * T * in * out FLOPs), and on fgemm's side the quantization of x and dy (each row-wise and
transposed) and of the weight. x requires its gradient (an inner layer of a network); no bias. Rows: tokens
4096 and 16384 times (in, out) = (7168, 2112), (7168, 4096), (2048, 7168), each without and with
fuse_wgrad_accumulation (fgemm's weight gradient added in FP32 to weight.main_grad by its GEMM). torch.nn.Linear
has no such option: its step is the same in both rows, the weight's .grad in BF16. fgemm's step is also timed as
a later micro-batch of an optimizer step with gradient accumulation (is_first_microbatch=False: the weight's FP8
codes kept from the first micro-batch, not quantized again).

Columns:
  kernel us   the durations of the kernels a step launches, summed, as the profiler records them, with L2
              flushed by zeroing 8 GB before every step, the two sides alternating in rounds, medians
              (docs/PERFORMANCE.md): the GPU's work, what a training loop whose host runs ahead sees.
  wall us     CUDA events around a step started on an idle GPU (synchronized after the same flush), medians:
              the kernel time plus the waits for Python to launch each kernel.
  x BF16      torch's time over fgemm's (later: over fgemm's on a later micro-batch).
Before timing, y, x.grad and the weight gradient of one step are compared with torch's (calc_diff); one above
2e-3 makes the exit status 1.
"""

import argparse
import json
import sys
from pathlib import Path

import torch

import fgemm
from fgemm.bench.cpu_timing import median_ms
from fgemm.bench.gpu_timing import event_times_us, kernel_breakdown_us, paired_times_us, rested_flush_buffer

FEATURES = [(7168, 2112), (7168, 4096), (2048, 7168)]
TOKENS = [4096, 16384]
MAX_DIFF = 2e-3
# fgemm's step, the same step on a later micro-batch of an optimizer step (the weight's codes kept from the first,
# is_first_microbatch=False), and torch's.
SIDES = ("fp8", "fp8_later", "bf16")


def layers(in_features, out_features, fuse, device):
    """fgemm.nn.Linear and torch.nn.Linear with the same BF16 weight."""
    fp8 = fgemm.nn.Linear(in_features, out_features, bias=False, device=device, fuse_wgrad_accumulation=fuse)
    bf16 = torch.nn.Linear(in_features, out_features, bias=False, device=device, dtype=torch.bfloat16)
    bf16.load_state_dict(fp8.state_dict())
    if fuse:
        fp8.weight.main_grad = torch.zeros(fp8.weight.shape, dtype=torch.float32, device=device)
    return fp8, bf16


def training_step(layer, x, dy, *inputs, **options):
    """One forward, layer(x, *inputs, **options), and backward; the previous step's gradients are dropped, not
    accumulated into."""
    def step():
        layer.weight.grad = None
        x.grad = None
        layer(x, *inputs, **options).backward(dy)
    return step


def step_outputs(layer, x, dy, *inputs):
    """y, x.grad and the weight gradient (main_grad where the layer accumulates into it) of one step from zero."""
    main_grad = getattr(layer.weight, "main_grad", None)
    if main_grad is not None:
        main_grad.zero_()
    x.grad = None
    layer.weight.grad = None
    y = layer(x, *inputs)
    y.backward(dy)
    return y.detach(), x.grad, layer.weight.grad if main_grad is None else main_grad


def measure(tokens, in_features, out_features, fuse, device, flush, breakdown=False):
    fp8, bf16 = layers(in_features, out_features, fuse, device)
    x = torch.randn(tokens, in_features, dtype=torch.bfloat16, device=device, requires_grad=True)
    dy = torch.randn(tokens, out_features, dtype=torch.bfloat16, device=device)
    row = {"tokens": tokens, "in": in_features, "out": out_features, "fuse_wgrad_accumulation": fuse}
    outputs = [step_outputs(layer, x, dy) for layer in (fp8, bf16)]  # also compiles fgemm's kernels
    for name, fp8_tensor, bf16_tensor in zip(("y", "dx", "dw"), *outputs):
        row[f"{name}_calc_diff"] = fgemm.calc_diff(fp8_tensor, bf16_tensor.float())
    fp8(x, is_first_microbatch=True)  # the codes the later micro-batches reuse
    steps = [training_step(fp8, x, dy), training_step(fp8, x, dy, is_first_microbatch=False),
             training_step(bf16, x, dy)]
    if flush is None:
        kernel = wall = [ms * 1e3 for ms in median_ms(steps, runs=2)]
    else:
        kernel, wall = paired_times_us(steps, flush), event_times_us(steps, flush)
    flops = 6 * tokens * in_features * out_features
    for side, kernel_us, wall_us in zip(SIDES, kernel, wall):
        row[f"{side}_kernel_us"], row[f"{side}_wall_us"] = kernel_us, wall_us
        row[f"{side}_kernel_tflops"] = flops / kernel_us / 1e6
    row["kernel_speedup"] = row["bf16_kernel_us"] / row["fp8_kernel_us"]
    row["wall_speedup"] = row["bf16_wall_us"] / row["fp8_wall_us"]
    row["later_kernel_speedup"] = row["bf16_kernel_us"] / row["fp8_later_kernel_us"]
    if breakdown:
        for side, step in zip(SIDES, steps):
            row[f"{side}_kernels_us"] = kernel_breakdown_us(step, flush)
    return row


def print_breakdown(row):
    for side in SIDES:
        print(f"  {side} step, kernel time by kernel (us):")
        for name, us in row[f"{side}_kernels_us"].items():
            print(f"    {us:9.1f}  {name[:100]}")


def markdown(rows):
    lines = ["| tokens | in | out | fused wgrad | FP8 kernel us | BF16 kernel us | x BF16 (kernel) | FP8 later "
             "micro-batch us | x BF16 (later) | FP8 TFLOPS | BF16 TFLOPS | FP8 wall us | BF16 wall us | x BF16 (wall) "
             "| calc_diff y / dx / dW |",
             "| ---: | ---: | ---: | :---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
             "| :---: |"]
    for row in rows:
        diffs = " / ".join(f"{row[f'{name}_calc_diff']:.1e}" for name in ("y", "dx", "dw"))
        fused = "yes" if row["fuse_wgrad_accumulation"] else "no"
        lines.append(f"| {row['tokens']} | {row['in']} | {row['out']} | {fused} "
                     f"| {row['fp8_kernel_us']:.0f} | {row['bf16_kernel_us']:.0f} | {row['kernel_speedup']:.2f} "
                     f"| {row['fp8_later_kernel_us']:.0f} | {row['later_kernel_speedup']:.2f} "
                     f"| {row['fp8_kernel_tflops']:.0f} | {row['bf16_kernel_tflops']:.0f} | {row['fp8_wall_us']:.0f} "
                     f"| {row['bf16_wall_us']:.0f} | {row['wall_speedup']:.2f} | {diffs} |")
    return "\n".join(lines)


def parse_arguments(parser, argv):
    """The options of the training benchmarks (--json, --dry-run, --breakdown) added to `parser`, parsed ->
    (args, device, flush buffer or None on the dry run)."""
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--dry-run", action="store_true", help="tiny CPU tensors, host-timed: the plumbing only")
    parser.add_argument("--breakdown", action="store_true",
                        help="also each side's kernel time by kernel, from one profile of five steps (GPU only)")
    args = parser.parse_args(argv)
    if args.breakdown and args.dry_run:
        parser.error("--breakdown needs the GPU: the dry run has no kernels to profile")
    torch.manual_seed(0)
    return args, "cpu" if args.dry_run else "cuda", None if args.dry_run else rested_flush_buffer()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=TOKENS, help="token counts (default 4096 16384)")
    args, device, flush = parse_arguments(parser, argv)
    # The dry run: one shape that is not a multiple of 128 anywhere, both ways of the weight gradient.
    tokens_list, features = ([200], [(272, 144)]) if args.dry_run else (args.tokens, FEATURES)
    rows = []
    for tokens in tokens_list:
        for in_features, out_features in features:
            for fuse in (False, True):
                row = measure(tokens, in_features, out_features, fuse, device, flush, args.breakdown)
                rows.append(row)
                print(f"T={tokens:6d} {in_features:5d}x{out_features:5d} fused={fuse!s:5s} kernel "
                      f"{row['fp8_kernel_us']:9.1f} vs {row['bf16_kernel_us']:9.1f} us ({row['kernel_speedup']:.2f}x), "
                      f"wall {row['fp8_wall_us']:9.1f} vs {row['bf16_wall_us']:9.1f} us ({row['wall_speedup']:.2f}x), "
                      f"later micro-batch {row['later_kernel_speedup']:.2f}x", flush=True)
                if args.breakdown:
                    print_breakdown(row)
    device_name = "cpu (dry run)" if args.dry_run else torch.cuda.get_device_name()
    print(f"\n{device_name}\n\n{markdown(rows)}")
    if args.json:
        Path(args.json).write_text(json.dumps({"device": device_name, "rows": rows}, indent=1))
    worst = max(row[f"{name}_calc_diff"] for row in rows for name in ("y", "dx", "dw"))
    return 0 if worst < MAX_DIFF else 1


if __name__ == "__main__":
    sys.exit(main())
