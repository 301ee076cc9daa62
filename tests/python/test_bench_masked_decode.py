"""bench/bench_masked_decode.py's dry run on tiny CPU tensors, and the routing counts it draws."""

import json
import subprocess
import sys
from pathlib import Path

import torch

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import bench_masked_decode  # noqa: E402


def test_routed_counts_spread_around_the_expected_tokens_with_some_experts_empty():
    generator = torch.Generator().manual_seed(3)
    counts = bench_masked_decode.routed_counts(32, 64, generator)
    assert counts.dtype == torch.int32 and counts.shape == (32,)
    assert int((counts == 0).sum()) >= 2
    busy = counts[counts > 0].float()
    assert 48 < busy.mean() < 80
    assert busy.max() > busy.min()  # drawn, not every expert alike


def test_the_dry_run_checks_every_expert_and_writes_its_table(tmp_path):
    out = tmp_path / "masked.json"
    run = subprocess.run([sys.executable, str(BENCH / "bench_masked_decode.py"), "--dry-run", "--json", str(out),
                          "--markdown"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    saved = json.loads(out.read_text())
    (row,) = saved["rows"]
    assert row["rows"] == sum(row["counts"]) and row["empty"] >= 1
    assert row["calc_diff"] < 1e-5
    assert row["routed_us"] > 0 and row["uniform_us"] > 0
    assert "| G | expected m |" in run.stdout
