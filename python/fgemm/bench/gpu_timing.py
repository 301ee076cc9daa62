"""Kernel time of GPU calls, as DeepGEMM's own benchmark takes it: the durations of the kernels a call launches,
summed, as the profiler records them, with L2 flushed before every call by zeroing a buffer; the median of many
calls after warm-up. CUDA events around a call would add about 3 µs of launch and completion, a quarter of the
time of the shortest seed shapes."""

import collections
import functools
import statistics

import torch

L2_FLUSH_BYTES = 256 << 20  # the "busy" flush: comfortably more than the 50 MB of an H100's L2
REST_FLUSH_BYTES = 8 * 10**9  # the "rested" flush: DeepGEMM's benchmark zeroes 8 GB before every call


def rested_flush_buffer():
    """The buffer of the "rested" protocol: 8 GB, or on a GPU with less memory than an H100 as much of it as
    leaves half the free memory for the operands. Zeroing it gives the GPU about 3 ms of memory-bound work
    between calls, in which an H100 held at its power limit by the previous call gets its clock back."""
    rest_bytes = min(REST_FLUSH_BYTES, torch.cuda.mem_get_info()[0] // 2)
    return torch.empty(rest_bytes, dtype=torch.uint8, device="cuda")


def is_gpu_activity(event):
    return event.device_type == torch.autograd.DeviceType.CUDA


@functools.cache  # one profile per flush buffer (a tensor hashes by identity), not one per measurement
def flush_kernel_names(flush):
    """The names of the GPU activities that zeroing `flush` launches, which separate the calls in a profile."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA], acc_events=True) as profile:
        flush.zero_()
        torch.cuda.synchronize()
    return {event.name for event in profile.events() if is_gpu_activity(event)}


def flushed_gpu_activities(calls, flush):
    """The profiler's GPU activities of calling each function of `calls` in that order, L2 flushed (by zeroing
    `flush`) before each."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA], acc_events=True) as profile:
        for fn in calls:
            flush.zero_()
            fn()
        torch.cuda.synchronize()
    return [event for event in profile.events() if is_gpu_activity(event)]


def kernel_times_us(calls, flush):
    """Kernel time of each function of `calls`, called in that order with L2 flushed before each, in
    microseconds: the durations of the GPU kernels it launched, summed, as the profiler records them."""
    times = times_between_flushes(flushed_gpu_activities(calls, flush), flush_kernel_names(flush))
    if len(times) != len(calls):
        raise RuntimeError(f"the profile holds {len(times)} flushes for {len(calls)} calls")
    return times


def kernel_breakdown_us(fn, flush, repeats=5):
    """{kernel name: microseconds per call of fn}, with L2 flushed before each call: where fn's kernel time goes."""
    events = flushed_gpu_activities([fn] * repeats, flush)
    return time_by_name(events, flush_kernel_names(flush), repeats)


def time_by_name(events, separators, calls):
    """The durations (µs) of the GPU activities summed by name and divided by the number of `calls`, largest first;
    those named in `separators` (the flushes', as times_between_flushes takes them) left out."""
    totals = collections.Counter()
    for event in events:
        if event.name not in separators:
            totals[event.name] += event.time_range.elapsed_us() / calls
    return dict(totals.most_common())


def times_between_flushes(events, separators):
    """The summed durations (µs) of the GPU activities after each flush, a flush being a run of activities
    named in `separators` (a large one is launched as several kernels), in the order they started."""
    times, in_flush = [], False
    for event in sorted(events, key=lambda event: event.time_range.start):
        if event.name in separators:
            if not in_flush:
                times.append(0.0)
            in_flush = True
        elif times:
            times[-1] += event.time_range.elapsed_us()
            in_flush = False
    return times


def kernel_time_us(fn, flush, warmup=5, repeats=40):
    """Median kernel time of fn() in microseconds, after `warmup` calls."""
    return statistics.median(kernel_times_us([fn] * (warmup + repeats), flush)[warmup:])


def paired_times_us(fns, flush, rounds=4, warmup=3, repeats=15):
    """Median kernel times of several functions measured in alternating rounds, so that a drift of the GPU's
    clocks or temperature during the run weighs on all of them alike."""
    calls = [fn for _ in range(rounds) for fn in fns for _ in range(warmup + repeats)]
    times = kernel_times_us(calls, flush)
    per_run = warmup + repeats
    samples = [[] for _ in fns]
    for run in range(rounds * len(fns)):
        samples[run % len(fns)] += times[run * per_run + warmup:(run + 1) * per_run]
    return [statistics.median(fn_times) for fn_times in samples]


def event_times_us(fns, flush, rounds=4, warmup=3, repeats=15):
    """Median wall time (µs) of each function between CUDA events recorded around it, each call started on an idle
    GPU after L2 is flushed, the functions alternating in rounds: the kernel time plus the waits for the host to
    launch each kernel."""
    samples = [[] for _ in fns]
    for _ in range(rounds):
        for fn, fn_samples in zip(fns, samples):
            for call in range(warmup + repeats):
                flush.zero_()
                torch.cuda.synchronize()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                if call >= warmup:
                    fn_samples.append(start.elapsed_time(end) * 1e3)
    return [statistics.median(fn_samples) for fn_samples in samples]
