"""Wall time of CPU calls: the median of several runs, the sides taking turns."""

import os
import statistics
import time


def prefer_passive_omp_wait():
    """Makes torch's OpenMP threads sleep at once after each operation, unless the caller chose a policy; must
    run before torch starts OpenMP. The sides of a CPU benchmark take turns, and after each of its operations
    torch's threads would otherwise spin for a while on the cores fgemm's threads are about to use: measured on
    a 16-core Xeon, that made fgemm's time up to twice as long and erratic, while torch's own times moved by no
    more than their run-to-run spread (up to 15%, neither way consistently) when its threads sleep at once."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def median_ms(fns, runs):
    """The median milliseconds of each of `fns` over `runs` calls, after one warm-up call each (it starts the
    thread pools and touches the memory). The calls take turns, so that a phase of the shared machine's load
    weighs on every side alike."""
    times = [[] for _ in fns]
    for fn in fns:
        fn()
    for _ in range(runs):
        for fn, fn_times in zip(fns, times):
            start = time.perf_counter()
            fn()
            fn_times.append(time.perf_counter() - start)
    return [statistics.median(fn_times) * 1e3 for fn_times in times]
