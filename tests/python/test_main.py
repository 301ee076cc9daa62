"""The main job, `python -m fgemm`, as a user runs it."""

import subprocess
import sys

import pytest


def run_main(*args):
    return subprocess.run([sys.executable, "-m", "fgemm", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("out", ["bf16", "fp32"])
def test_main_job_on_the_cpu(out):
    result = run_main("--device", "cpu", "--m", "96", "--n", "384", "--k", "640", "--out", out, "--runs", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = dict(line.split(None, 1) for line in result.stdout.splitlines())
    assert lines["shape"].startswith(f"M=96 N=384 K=640, D {out}")
    assert lines["backend"].startswith("cpu (") and "threads)" in lines["backend"]
    assert float(lines["TFLOPS"]) > 0
    diff = float(lines["calc_diff"].split()[0])
    assert diff < (1e-5 if out == "bf16" else 1e-9)


def test_main_job_refuses_a_k_the_gemm_does_not_take():
    result = run_main("--device", "cpu", "--m", "4", "--n", "8", "--k", "100")
    assert result.returncode != 0
    assert "argument 'a'" in result.stderr and "multiple of 16" in result.stderr
