"""Times one operation on the shapes of a table, on the GPU or the CPU: a section of the report."""

import torch

from . import cpu_timing, gpu_timing
from .operations import GEMMS, UNIT, make_case
from .progress import progress

# How each device's times are taken, as the report states it.
PROTOCOLS = {
    "cuda": "Kernel time from the profiler (the durations of the kernels a call launches, summed), L2 flushed "
            "before every call. GEMMs: an 8 GB buffer zeroed before every call (DeepGEMM's benchmark, which gives "
            "the GPU about 3 ms to recover its clock between calls); fgemm and its baselines alternate in 4 "
            "rounds of 15 calls after 3 warm-up calls each; the median. Quantizers and their torch chains: a "
            "256 MB buffer zeroed before every call, median of 100 calls after 10 warm-up calls.",
    "cpu": "Wall time of each call, the median of {runs} runs after a warm-up call, fgemm and its baselines "
           "taking turns; torch's OpenMP threads sleep at once after each operation (OMP_WAIT_POLICY=PASSIVE "
           "unless set otherwise), so that they do not spin on the cores fgemm's threads need.",
}


class Timer:
    """Times a case's calls (fgemm's first) in microseconds, by the protocol of the device."""

    def __init__(self, device, runs):
        self.device, self.runs = device, runs
        if device == "cuda":
            self.rested_flush = gpu_timing.rested_flush_buffer()
            self.busy_flush = torch.empty(gpu_timing.L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")

    def times_us(self, operation, calls):
        if self.device == "cpu":
            return [ms * 1e3 for ms in cpu_timing.median_ms(calls, self.runs)]
        if operation in GEMMS:
            return gpu_timing.paired_times_us(calls, self.rested_flush)
        return [gpu_timing.kernel_time_us(call, self.busy_flush, warmup=10, repeats=100) for call in calls]


def available(call):
    """None if the call runs, else why not (cuBLASLt's block-scaled GEMM refuses some shapes, e.g. M = 1)."""
    try:
        call()
    except RuntimeError as error:
        return str(error).strip().splitlines()[0]
    return None


def run_section(operation, entries, timer, baseline_names, sfa_mn_major, about):
    """The rows of one operation on `entries` (their times; derive() adds what follows from them and the peaks),
    with the section's description."""
    rows = []
    for entry in progress(entries, operation):
        case = make_case(operation, entry, timer.device, baseline_names, sfa_mn_major)
        case.run()
        row = dict(label=case.label, shape=entry, flops=case.flops, bytes=case.bytes, calc_diff=case.check())
        unavailable = {name: why for name, call in case.baselines.items() if (why := available(call))}
        timed = {"fgemm": case.run} | {name: call for name, call in case.baselines.items() if name not in unavailable}
        row["us"] = dict(zip(timed, timer.times_us(operation, list(timed.values())))) | dict.fromkeys(unavailable)
        if unavailable:
            row["unavailable"] = unavailable
        rows.append(row)
    return dict(operation=operation, unit=UNIT[operation], baselines=list(baseline_names), about=about, rows=rows)
