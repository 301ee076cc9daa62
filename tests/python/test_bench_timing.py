"""The GPU benchmark's split of a profile into calls: every speed figure in docs/PERFORMANCE.md rests on it."""

from types import SimpleNamespace

from fgemm.bench.gpu_timing import time_by_name, times_between_flushes


def activity(name, start, duration):
    """A stand-in for the profiler's event of one GPU activity."""
    return SimpleNamespace(name=name, time_range=SimpleNamespace(start=start, elapsed_us=lambda: duration))


def test_each_call_sums_its_kernels_and_a_flush_of_several_kernels_separates_once():
    events = [
        activity("fill", 0, 900), activity("fill", 901, 900),  # a flush launched as two kernels
        activity("gemm", 1802, 10.5),
        activity("fill", 1813, 900),
        activity("expert_gemm", 2714, 3.0), activity("expert_gemm", 2718, 4.0),  # a call of two kernels
        activity("fill", 2723, 900), activity("fill", 3624, 900),
        activity("gemm", 4525, 11.0),
    ]
    # The profiler does not hand the events over in the order they started.
    assert times_between_flushes(reversed(events), {"fill"}) == [10.5, 7.0, 11.0]


def test_activities_before_the_first_flush_are_ignored_and_adjacent_flushes_read_as_one():
    events = [activity("gemm", 0, 5.0), activity("fill", 6, 900), activity("fill", 907, 1), activity("gemm", 909, 2.0)]
    # Two flushes back to back read as one: the benchmark's check of the number of calls catches that.
    assert times_between_flushes(events, {"fill"}) == [2.0]


def test_the_breakdown_sums_each_kernel_per_call_without_the_flushes():
    events = [activity("fill", 0, 900), activity("gemm", 901, 10.0), activity("cast", 912, 3.0),
              activity("fill", 916, 900), activity("gemm", 1817, 12.0), activity("cast", 1830, 1.0)]
    breakdown = time_by_name(events, {"fill"}, calls=2)
    assert breakdown == {"gemm": 11.0, "cast": 2.0} and list(breakdown) == ["gemm", "cast"]
