"""GPU benchmark of a training step of fgemm.nn.GroupedLinear (FP8) against the same experts in BF16, at
DeepSeek-V3's expert shapes.

    python bench/bench_fp8_grouped_training.py [--json out.json] [--breakdown]
    python bench/bench_fp8_grouped_training.py --dry-run        the plumbing on tiny CPU tensors

A step is y = layer(x, m_splits) then y.backward(dy), x requiring its gradient: three grouped GEMMs on each side
(6 * rows * in * out FLOPs). Rows: (experts, routed rows) = (8, 8192), (8, 32768), (32, 32768) times (in, out) =
(7168, 4096), an expert's gate and up projections together, and (2048, 7168), its down projection; each without
and with fuse_wgrad_accumulation (fgemm's weight gradient added in FP32 to weight.main_grad by its GEMM; the BF16
sides then add their BF16 .grad to an FP32 main_grad after the step, as a torch user accumulating in FP32 does). The rows are routed unevenly, as a router does: expert g gets a share
drawn from a log-normal, seeded (m_splits in the JSON), the counts in general not multiples of 128.

Sides:
  fp8        fgemm.nn.GroupedLinear
  fp8_later  the same step on a later micro-batch of an optimizer step with gradient accumulation
             (is_first_microbatch=False: the weights' FP8 codes kept from the first micro-batch)
  grouped    torch._grouped_mm in BF16 (one grouped GEMM each way, through autograd), where this torch has it
  loop       torch.nn.functional.linear in BF16 once per expert on x.split(m_splits), concatenated (cuBLAS per
             expert)
Times as in bench_fp8_training.py: kernel us (the step's kernels summed, 8 GB flush, sides alternating) and wall
us (CUDA events). Before timing, y, x.grad and the weight gradient of one step are compared with the loop's
(calc_diff); one above 2e-3 makes the exit status 1.
"""

import argparse
import itertools
import json
import math
import sys
from pathlib import Path

import torch

import fgemm
from bench_fp8_training import MAX_DIFF, parse_arguments, step_outputs, training_step
from fgemm.bench.cpu_timing import median_ms
from fgemm.bench.gpu_timing import event_times_us, kernel_breakdown_us, paired_times_us

FEATURES = [(7168, 4096), (2048, 7168)]
EXPERTS_AND_ROWS = [(8, 8192), (8, 32768), (32, 32768)]
ROUTING_SPREAD = 0.5  # the standard deviation of the log of an expert's share


class LoopExperts(torch.nn.Module):
    """The experts in BF16 as a loop: torch.nn.functional.linear per expert on its rows."""

    def __init__(self, weight: torch.Tensor):
        super().__init__()
        self.weight = torch.nn.Parameter(weight.detach().clone())

    def forward(self, x, m_splits):
        parts = x.split(m_splits)
        return torch.cat([torch.nn.functional.linear(part, self.weight[g]) for g, part in enumerate(parts)])


class GroupedMmExperts(LoopExperts):
    """The experts in BF16 as one grouped GEMM: torch._grouped_mm with the experts' end rows as offsets."""

    def forward(self, x, m_splits):
        # The offsets copied from pinned memory, asynchronously, as fgemm's layer copies its tables: from pageable
        # memory the copy would wait for the GPU to finish the work queued before it.
        ends = torch.tensor(list(itertools.accumulate(m_splits)), dtype=torch.int32, pin_memory=x.is_cuda)
        return torch._grouped_mm(x, self.weight.transpose(1, 2), offs=ends.to(x.device, non_blocking=True))


def grouped_mm_works(device) -> bool:
    """Whether this torch has torch._grouped_mm in BF16 on `device`, forward and backward."""
    if not hasattr(torch, "_grouped_mm"):
        return False
    layer = GroupedMmExperts(torch.randn(2, 16, 16, dtype=torch.bfloat16, device=device))
    x = torch.randn(32, 16, dtype=torch.bfloat16, device=device, requires_grad=True)
    try:
        y = layer(x, [8, 24])
        y.backward(torch.ones_like(y))
    except (RuntimeError, NotImplementedError):
        return False
    return True


def routed_splits(experts: int, rows: int, seed: int):
    """m_splits of `rows` over `experts`: shares drawn from a log-normal, rounded by largest remainder."""
    generator = torch.Generator().manual_seed(seed)
    shares = torch.exp(torch.randn(experts, generator=generator, dtype=torch.float64) * ROUTING_SPREAD)
    exact = shares / shares.sum() * rows
    splits = exact.floor().long()
    for g in torch.argsort(exact - splits, descending=True)[:rows - int(splits.sum())]:
        splits[g] += 1
    return splits.tolist()


# fgemm's step, and the same step on a later micro-batch of an optimizer step (the weights' codes kept from the
# first, is_first_microbatch=False).
FGEMM_SIDES = ("fp8", "fp8_later")


def layers(experts, in_features, out_features, fuse, device, bf16_sides):
    """fgemm.nn.GroupedLinear, and the BF16 sides with the same weights in the order of `bf16_sides`."""
    fp8 = fgemm.nn.GroupedLinear(experts, in_features, out_features, device=device, fuse_wgrad_accumulation=fuse)
    if fuse:
        fp8.weight.main_grad = torch.zeros(fp8.weight.shape, dtype=torch.float32, device=device)
    bf16 = {"loop": LoopExperts, "grouped": GroupedMmExperts}
    return fp8, [bf16[side](fp8.weight) for side in bf16_sides]


def bf16_step(module, x, dy, m_splits, accumulate):
    """A BF16 side's step; where fgemm's accumulates into main_grad, followed by what a torch user adds for it:
    main_grad += weight.grad, in FP32."""
    step = training_step(module, x, dy, m_splits)
    if not accumulate:
        return step
    main_grad = torch.zeros(module.weight.shape, dtype=torch.float32, device=module.weight.device)

    def accumulating_step():
        step()
        main_grad.add_(module.weight.grad)
    return accumulating_step


def measure(experts, rows, in_features, out_features, fuse, device, flush, bf16_sides, breakdown=False):
    m_splits = routed_splits(experts, rows, seed=experts * 100003 + rows)
    fp8, bf16 = layers(experts, in_features, out_features, fuse, device, bf16_sides)
    x = torch.randn(rows, in_features, dtype=torch.bfloat16, device=device, requires_grad=True)
    dy = torch.randn(rows, out_features, dtype=torch.bfloat16, device=device)
    row = {"experts": experts, "rows": rows, "in": in_features, "out": out_features, "fuse_wgrad_accumulation": fuse,
           "m_splits": m_splits}
    outputs = {side: step_outputs(module, x, dy, m_splits) for side, module in zip(("fp8",) + bf16_sides,
                                                                                   [fp8] + bf16)}
    for side in outputs:
        if side == "loop":
            continue
        for name, tensor, reference in zip(("y", "dx", "dw"), outputs[side], outputs["loop"]):
            row[f"{side}_{name}_calc_diff"] = fgemm.calc_diff(tensor.float(), reference.float())
    fp8(x, m_splits, is_first_microbatch=True)  # the codes the later micro-batches reuse
    steps = [training_step(fp8, x, dy, m_splits), training_step(fp8, x, dy, m_splits, is_first_microbatch=False)]
    steps += [bf16_step(module, x, dy, m_splits, fuse) for module in bf16]
    if flush is None:
        kernel = wall = [ms * 1e3 for ms in median_ms(steps, runs=2)]
    else:
        kernel, wall = paired_times_us(steps, flush), event_times_us(steps, flush)
    flops = 6 * rows * in_features * out_features
    sides = FGEMM_SIDES + bf16_sides
    for side, kernel_us, wall_us in zip(sides, kernel, wall):
        row[f"{side}_kernel_us"], row[f"{side}_wall_us"] = kernel_us, wall_us
        row[f"{side}_kernel_tflops"] = flops / kernel_us / 1e6
    for side in bf16_sides:
        row[f"kernel_speedup_over_{side}"] = row[f"{side}_kernel_us"] / row["fp8_kernel_us"]
        row[f"wall_speedup_over_{side}"] = row[f"{side}_wall_us"] / row["fp8_wall_us"]
        row[f"later_kernel_speedup_over_{side}"] = row[f"{side}_kernel_us"] / row["fp8_later_kernel_us"]
    if breakdown:
        for side, step in zip(sides, steps):
            row[f"{side}_kernels_us"] = kernel_breakdown_us(step, flush)
    return row


def markdown(rows, bf16_sides):
    header = ["experts", "rows", "in", "out", "fused wgrad", "FP8 kernel us"]
    header += [f"BF16 {side} kernel us" for side in bf16_sides] + [f"x BF16 {side}" for side in bf16_sides]
    header += ["FP8 later micro-batch us"] + [f"x BF16 {side} (later)" for side in bf16_sides]
    header += ["FP8 TFLOPS", "FP8 wall us"] + [f"x BF16 {side} (wall)" for side in bf16_sides]
    header += ["calc_diff y / dx / dW"]
    lines = ["| " + " | ".join(header) + " |", "|" + " ---: |" * (len(header) - 1) + " :---: |"]
    for row in rows:
        diffs = " / ".join(f"{row[f'fp8_{name}_calc_diff']:.1e}" for name in ("y", "dx", "dw"))
        cells = [row["experts"], row["rows"], row["in"], row["out"], "yes" if row["fuse_wgrad_accumulation"] else "no",
                 f"{row['fp8_kernel_us']:.0f}"]
        cells += [f"{row[f'{side}_kernel_us']:.0f}" for side in bf16_sides]
        cells += [f"{row[f'kernel_speedup_over_{side}']:.2f}" for side in bf16_sides]
        cells += [f"{row['fp8_later_kernel_us']:.0f}"]
        cells += [f"{row[f'later_kernel_speedup_over_{side}']:.2f}" for side in bf16_sides]
        cells += [f"{row['fp8_kernel_tflops']:.0f}", f"{row['fp8_wall_us']:.0f}"]
        cells += [f"{row[f'wall_speedup_over_{side}']:.2f}" for side in bf16_sides] + [diffs]
        lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    return "\n".join(lines)


def summary(rows, bf16_sides):
    """The geometric mean and the minimum of fgemm's kernel-time speed-up over each BF16 side, on the first
    micro-batch and on later ones."""
    out = {}
    for side in bf16_sides:
        for prefix in ("", "later_"):
            ratios = [row[f"{prefix}kernel_speedup_over_{side}"] for row in rows]
            out[f"{prefix}kernel_speedup_over_{side}_geomean"] = math.exp(sum(map(math.log, ratios)) / len(ratios))
            out[f"{prefix}kernel_speedup_over_{side}_min"] = min(ratios)
    return out


def print_breakdown(row, sides):
    for side in sides:
        print(f"  {side} step, kernel time by kernel (us):")
        for name, us in row[f"{side}_kernels_us"].items():
            print(f"    {us:9.1f}  {name[:100]}")


def main(argv=None):
    args, device, flush = parse_arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]), argv)
    bf16_sides = ("loop",) + (("grouped",) if grouped_mm_works(device) else ())
    sides = FGEMM_SIDES + bf16_sides
    # The dry run: shapes that are multiples of 128 nowhere.
    configs, features = ([(3, 300)], [(272, 144)]) if args.dry_run else (EXPERTS_AND_ROWS, FEATURES)
    rows = []
    for experts, routed_rows in configs:
        for in_features, out_features in features:
            for fuse in (False, True):
                row = measure(experts, routed_rows, in_features, out_features, fuse, device, flush, bf16_sides,
                              args.breakdown)
                rows.append(row)
                speedups = ", ".join(f"{row[f'kernel_speedup_over_{side}']:.2f}x {side} (later micro-batch "
                                     f"{row[f'later_kernel_speedup_over_{side}']:.2f}x)" for side in bf16_sides)
                print(f"G={experts:3d} rows={routed_rows:6d} {in_features:5d}x{out_features:5d} fused={fuse!s:5s} "
                      f"kernel {row['fp8_kernel_us']:9.1f} us ({speedups})", flush=True)
                if args.breakdown:
                    print_breakdown(row, sides)
    device_name = "cpu (dry run)" if args.dry_run else torch.cuda.get_device_name()
    totals = summary(rows, bf16_sides)
    print(f"\n{device_name}, sides {', '.join(sides)}\n\n{markdown(rows, bf16_sides)}\n")
    for key, value in totals.items():
        print(f"- {key}: {value:.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"device": device_name, "sides": sides, "summary": totals,
                                               "rows": rows}, indent=1))
    worst = max(value for row in rows for key, value in row.items() if key.endswith("_calc_diff"))
    return 0 if worst < MAX_DIFF else 1


if __name__ == "__main__":
    sys.exit(main())
