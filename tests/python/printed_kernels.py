"""Runs a Python program of the GPU tests with the heuristics' choices printed (FGEMM_PRINT_CONFIGS), for the tests
that must know which kernels ran."""

import subprocess

from sanitizer import python_program


def run_printing_kernels(program, tmp_path):
    """Runs `program` (Python source, which may import this directory's modules) and asserts that it succeeded;
    returns the lines it printed that begin with "case " and the names of the kernels it launched."""
    command, env = python_program(program, tmp_path)
    result = subprocess.run(command, capture_output=True, text=True, timeout=600,
                            env={**env, "FGEMM_PRINT_CONFIGS": "1"})
    assert result.returncode == 0, result.stderr[-4000:]
    cases = [line for line in result.stdout.splitlines() if line.startswith("case ")]
    kernels = [word.rstrip(",") for word in result.stderr.split() if word.startswith("fgemm_sm90_")]
    return cases, kernels


def assert_each_case_launched(program, tmp_path, count, suffix):
    """Runs `program` as run_printing_kernels does and asserts that it printed `count` cases, which launched `count`
    kernels, every one named with `suffix` at its end."""
    cases, kernels = run_printing_kernels(program, tmp_path)
    assert len(cases) == count, cases
    assert len(kernels) == count and all(name.endswith(suffix) for name in kernels), kernels
