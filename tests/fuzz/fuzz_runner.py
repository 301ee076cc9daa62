"""Running fuzz cases and collecting their results, in this process or in worker processes.

On the GPU the time goes mostly into compiling kernels (once per kernel shape, output type, C and tile
configuration), which holds the Python thread; worker processes compile in parallel. The cases of one kernel
shape go to one worker, so that no two compile the same kernels.
"""

import concurrent.futures
import multiprocessing
import time
import traceback

import torch

from fuzz_cases import layout_of_name
from fuzz_checks import check, tolerance
from fuzz_ops import run_case


# Attempts of a case whose tensors or FP64 reference did not fit the GPU's memory, which the worker processes
# share: each waits for the others to free some.
OUT_OF_MEMORY_ATTEMPTS = 5


def run_fitting_in_memory(params, device):
    """run_case, again after a pause where the GPU's memory, shared with the other workers, is full."""
    for attempt in range(OUT_OF_MEMORY_ATTEMPTS):
        try:
            return run_case(params, device)
        except torch.OutOfMemoryError:
            if attempt + 1 == OUT_OF_MEMORY_ATTEMPTS:
                raise
            torch.cuda.empty_cache()
            time.sleep(1 + attempt)


def run_one(params, device):
    """The result of one case: its parameters, problems (empty when it passed), calc_diff and seconds."""
    layout = layout_of_name(params["layout"])
    start = time.perf_counter()
    try:
        outcome = run_fitting_in_memory(params, device)
        problems, diff = check(outcome, tolerance(layout, params["out"], device))
        del outcome
    except Exception as error:  # noqa: BLE001 - any error of a valid case is a failure to report, not to stop on
        problems, diff = [f"{type(error).__name__}: {error}".strip()], float("nan")
        if not isinstance(error, (ValueError, TypeError, RuntimeError)):
            problems.append(traceback.format_exc(limit=3))
    if device == "cuda":
        # The case's memory goes back to the GPU, which the workers share: one that kept the cache of its largest
        # case held 35 of an H100's 80 GB, and other workers' cases ran out of memory through all their attempts.
        torch.cuda.empty_cache()
    return dict(index=params["index"], layout=params["layout"], params=params, problems=problems, calc_diff=diff,
                seconds=time.perf_counter() - start)


def run_many(cases, device):
    return [run_one(params, device) for params in cases]


def buckets(cases):
    """The cases grouped by layout and kernel shape (slot), the largest groups first."""
    groups = {}
    for params in cases:
        groups.setdefault((params["layout"], params["slot"]), []).append(params)
    return sorted(groups.values(), key=len, reverse=True)


def run_all(cases, device, jobs, on_results):
    """Runs every case, calling on_results(list of results) as each kernel shape's cases finish; in `jobs`
    worker processes (spawned: each has a CUDA context of its own) where jobs > 1."""
    if jobs <= 1:
        for bucket in buckets(cases):
            on_results(run_many(bucket, device))
        return
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = {pool.submit(run_many, bucket, device): bucket for bucket in buckets(cases)}
        for future in concurrent.futures.as_completed(futures):
            try:
                on_results(future.result())
            except concurrent.futures.process.BrokenProcessPool as error:
                # A worker died (a crash in a kernel launch, say): its cases and those not run are failures.
                on_results([dict(index=params["index"], layout=params["layout"], params=params,
                                 problems=[f"worker process died: {error}"], calc_diff=float("nan"), seconds=0.0)
                            for params in futures[future]])
