"""Runs a Python program under one of compute-sanitizer's tools, for the GPU tests: memcheck (out-of-bounds and
misaligned accesses of every kernel launch) or racecheck (shared-memory hazards between a CTA's threads, and
between the CTAs of a cluster); and reads racecheck's hazards one by one."""

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).parent
# Enough for every hazard of the programs the tests run, so that none goes unread.
HAZARD_PRINT_LIMIT = 500_000


def sanitizer_executable():
    """compute-sanitizer's path; skips the test where it is not installed."""
    sanitizer = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    if not os.path.exists(sanitizer):
        pytest.skip("compute-sanitizer is not installed")
    return sanitizer


def python_program(program, tmp_path):
    """The command line and environment that run `program` (Python source, which may import this directory's
    modules), which prints a last line of its own once it is done."""
    script = tmp_path / "program_under_sanitizer.py"
    script.write_text(program + '\nprint("sanitized program done")\n')
    path = os.pathsep.join(filter(None, [str(TESTS_DIR), os.environ.get("PYTHONPATH")]))
    return [sys.executable, str(script)], {**os.environ, "PYTHONPATH": path}


def assert_sanitizer_clean(program, tmp_path, tool="memcheck"):
    """Runs `program` (Python source, which may import this directory's modules) under compute-sanitizer's
    `tool` and asserts that it finished with no error. Skips where compute-sanitizer is not installed."""
    sanitizer = sanitizer_executable()
    command, env = python_program(program, tmp_path)
    result = subprocess.run([sanitizer, "--tool", tool, "--error-exitcode", "3", *command], capture_output=True,
                            text=True, timeout=900, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "sanitized program done" in output
    assert "ERROR SUMMARY: 0 errors" in output or "RACECHECK SUMMARY: 0 hazards" in output, output[-4000:]


@dataclass(frozen=True)
class Access:
    kind: str  # "Write" or "Read"
    thread: int  # threadIdx.x
    rank: int  # the CTA's rank in its cluster
    function: str  # where the access is, e.g. "fgemm::ptx::load_cluster_f32x4" (with line information)


@dataclass(frozen=True)
class Hazard:
    kind: str  # "RAW", "WAR" or "WAW"
    first: Access
    second: Access


HAZARD = re.compile(r"Potential (RAW|WAR|WAW) hazard detected at __shared__")
ACCESS = re.compile(r"(Write|Read) Thread \((\d+),\d+,\d+\) \(block rank (\d+)\) at ([^(+\s]+)")


def racecheck_hazards(command, env=None):
    """Runs `command` under racecheck and returns (every hazard it reported, the program's output). Asserts that
    the program exited 0 and that racecheck printed every hazard it found."""
    sanitizer = sanitizer_executable()
    result = subprocess.run([sanitizer, "--tool", "racecheck", "--racecheck-report", "hazard", "--show-backtrace",
                             "no", "--print-limit", str(HAZARD_PRINT_LIMIT), *command],
                            capture_output=True, text=True, timeout=900, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    summary = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?", output)
    assert summary is not None, output[-4000:]
    assert summary.group(1) == summary.group(2), "racecheck left hazards unprinted: " + summary.group(0)
    hazards = []
    lines = output.splitlines()
    for i, line in enumerate(lines):
        found = HAZARD.search(line)
        if not found:
            continue
        accesses = [ACCESS.search(text) for text in lines[i + 1:i + 3]]
        assert all(accesses), "\n".join(lines[i:i + 3])
        first, second = (Access(a.group(1), int(a.group(2)), int(a.group(3)), a.group(4)) for a in accesses)
        hazards.append(Hazard(found.group(1), first, second))
    assert len(hazards) == int(summary.group(1)), output[-4000:]
    return hazards, output
