"""bench/bench_fp8_training.py's dry run: a step of fgemm.nn.Linear (also as a later micro-batch) and of
torch.nn.Linear on tiny CPU tensors, checked and timed, both ways of the weight gradient."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_fp8_training  # noqa: E402


def test_the_dry_run_checks_and_times_both_ways_of_the_weight_gradient(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert bench_fp8_training.main(["--dry-run", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [row["fuse_wgrad_accumulation"] for row in rows] == [False, True]
    assert all(row[f"{name}_calc_diff"] < bench_fp8_training.MAX_DIFF for row in rows for name in ("y", "dx", "dw"))
    assert all(row["fp8_kernel_us"] > 0 and row["fp8_later_kernel_us"] > 0 and row["bf16_wall_us"] > 0 for row in rows)
    assert "| 200 | 272 | 144 | yes |" in capsys.readouterr().out


def test_help_needs_no_gpu(capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench_fp8_training.main(["--help"])
    assert exit_info.value.code == 0 and "--dry-run" in capsys.readouterr().out


def test_the_breakdown_is_refused_on_the_dry_run(capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench_fp8_training.main(["--dry-run", "--breakdown"])
    assert exit_info.value.code == 2 and "--breakdown needs the GPU" in capsys.readouterr().err


def test_the_breakdown_prints_each_kernel_of_a_side(capsys):
    row = {"fp8_kernels_us": {"fgemm_sm90_fp8_gemm": 2298.4, "fgemm_cast_transpose": 273.5},
           "fp8_later_kernels_us": {"fgemm_sm90_fp8_gemm": 2297.0, "fgemm_cast_transpose": 225.1},
           "bf16_kernels_us": {"nvjet_sm90_tst_192x192": 1242.3}}
    bench_fp8_training.print_breakdown(row)
    out = capsys.readouterr().out
    assert "fp8 step" in out and "2298.4  fgemm_sm90_fp8_gemm" in out and "1242.3  nvjet_sm90_tst_192x192" in out
    assert "fp8_later step" in out and "225.1  fgemm_cast_transpose" in out
