"""Runs a Python program under one of compute-sanitizer's tools, for the GPU tests: memcheck (out-of-bounds and
misaligned accesses of every kernel launch) or racecheck (shared-memory hazards between a CTA's threads, and
between the CTAs of a cluster)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).parent


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

