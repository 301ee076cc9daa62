"""bench/read_probe.py on a machine without a GPU: it says what it needs instead of failing somewhere inside."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine could run the probe")
def test_without_a_gpu_it_says_so():
    run = subprocess.run([sys.executable, str(BENCH / "read_probe.py")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "needs a CUDA device" in run.stderr
