"""bench/bench_16bit.py's dry run: every row of its tables through fgemm and torch on tiny CPU tensors."""

import json
import subprocess
import sys
from pathlib import Path

import torch

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import bench_16bit  # noqa: E402
from fgemm.bench import tables  # noqa: E402


def test_the_dry_run_covers_every_row_and_writes_its_tables(tmp_path):
    out = tmp_path / "bench.json"
    run = subprocess.run([sys.executable, str(BENCH / "bench_16bit.py"), "--dry-run", "--json", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    saved = json.loads(out.read_text())
    anchors = tables.load_table("precision_anchors")
    rows = saved["rows"]
    assert len(rows["normal"]) == 2 * len(anchors["bf16_normal"]) == 150
    assert len(rows["m_grouped"]) == len(anchors["bf16_m_grouped_contiguous"])
    assert len(rows["k_grouped"]) == len(anchors["fp8_k_grouped_contiguous"])
    assert {row["dtype"] for row in rows["normal"]} == {"bf16", "fp16"}
    assert {row["layout"] for row in rows["normal"]} == {"NT", "NN", "TN"}
    every = [row for section in rows.values() for row in section]
    assert all(row["calc_diff"] < 1e-5 and row["cublas_calc_diff"] < 1e-5 for row in every)
    assert all(row["fgemm_tflops"] > 0 and row["cublas_tflops"] > 0 for row in every)
    assert "fgemm_fp16_over_bf16_geomean" in saved["summary"]

    printed = subprocess.run([sys.executable, str(BENCH / "bench_16bit.py"), "--markdown-from", str(out)],
                             capture_output=True, text=True, timeout=60)
    assert printed.returncode == 0, printed.stderr
    table_rows = [line for line in printed.stdout.splitlines() if line.startswith("| ") and "---" not in line]
    headers = 4
    assert len(table_rows) == headers + 75 + 75 + len(rows["m_grouped"]) + len(rows["k_grouped"])


def test_a_wrong_result_fails_the_dry_run(monkeypatch):
    import fgemm

    real = fgemm.bf16_gemm_tn

    def b_transposed(a, b, d, c=None):  # B read in the other storage order
        real(a, b.t().contiguous(), d, c)

    monkeypatch.setattr(fgemm, "bf16_gemm_tn", b_transposed)
    # Square B (K = N) and M a multiple of 8, so that the transposed B still fits.
    monkeypatch.setattr(bench_16bit, "shrunk", lambda row: dict(row, m=min(row["m"], 40), n=48, k=48))
    assert bench_16bit.main(["--dry-run", "--quick", "--sections", "normal"]) == 1
