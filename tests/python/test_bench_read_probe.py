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


def test_the_markdown_tables_carry_each_shapes_numbers():
    sys.path.insert(0, str(BENCH))
    import read_probe

    times = {"bulk 1x4x16K": 9.0, "vector 2x1024": 8.0}
    rows = [dict(m=1, n=2112, k=7168, bytes=15_154_240, deepgemm_us=12.73, fgemm_us=13.1, read_us=8.0,
                 reader="vector 2x1024", read_times=times, read_fraction_of_copy=0.627, fgemm_fraction_of_copy=0.38),
            dict(m=64, n=4096, k=7168, bytes=30_400_000, deepgemm_us=17.2, fgemm_us=17.5, read_us=13.4,
                 reader="vector 2x1024", read_times={"bulk 1x4x16K": 16.4, "vector 2x1024": 13.4},
                 read_fraction_of_copy=0.75, fgemm_fraction_of_copy=0.58)]
    result = dict(rows=rows, summary=dict(gpu="H100", copy_gbps=3017.4),
                  boxes={"2112x7168": {"16x1x16": 13.9, "16x4x4": 9.1}})
    text = read_probe.markdown(result)
    assert "| 1 | 2112 | 7168 | 15.2 | 12.7 | 10.2 | 13.1 | 8.0 (vector 2x1024) | 9.0 | 0.63 | 0.61 |" in text
    assert "| 64 | 4096 | 7168 | 30.4 | 17.2 | 13.8 | 17.5 | 13.4 (vector 2x1024) | 16.4 | 0.75 | 0.77 |" in text
    assert "| vector 2x1024 | 8.0 |" in text  # the readers on the M = 1 shape of N = 2112
    assert "| 16 x 4 x 4 | 9.1 |" in text and "| B 2112 x 7168 |" in text
    assert "- copy_gbps: 3017.400" in text
