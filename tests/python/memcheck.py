"""Runs a Python program under compute-sanitizer's memcheck, for the GPU tests: every kernel launch of the
program is checked for out-of-bounds and misaligned accesses."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).parent


def assert_memcheck_clean(program, tmp_path):
    """Runs `program` (Python source, which may import this directory's modules) under memcheck and asserts that
    it finished with no error. Skips where compute-sanitizer is not installed."""
    sanitizer = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    if not os.path.exists(sanitizer):
        pytest.skip("compute-sanitizer is not installed")
    script = tmp_path / "program_under_memcheck.py"
    script.write_text(program + '\nprint("memcheck program done")\n')
    path = os.pathsep.join(filter(None, [str(TESTS_DIR), os.environ.get("PYTHONPATH")]))
    result = subprocess.run([sanitizer, "--tool", "memcheck", "--error-exitcode", "3", sys.executable, str(script)],
                            capture_output=True, text=True, timeout=900, env={**os.environ, "PYTHONPATH": path})
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "memcheck program done" in output
    assert "ERROR SUMMARY: 0 errors" in output, output[-4000:]
