"""bench/bench_fp8_training.py's dry run: a step of fgemm.nn.Linear and torch.nn.Linear on tiny CPU tensors,
checked and timed, both ways of the weight gradient."""

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
    assert all(row["fp8_kernel_us"] > 0 and row["bf16_wall_us"] > 0 for row in rows)
    assert "| 200 | 272 | 144 | yes |" in capsys.readouterr().out


def test_help_needs_no_gpu(capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench_fp8_training.main(["--help"])
    assert exit_info.value.code == 0 and "--dry-run" in capsys.readouterr().out
