"""python -m fgemm.bench --compare: the change per shape between two runs, regressions beyond the threshold
marked (and the exit status 1)."""

import copy
import json
from pathlib import Path

import pytest

from fgemm.bench.cli import main
from fgemm.bench.compare import compare_runs
from fgemm.bench.metrics import derive

RECORDED_RUN = Path(__file__).resolve().parent / "data" / "bench_run_cpu.json"


def slowed_down(run, operation, row_index, factor):
    """A copy of `run` where fgemm took `factor` times as long on one shape."""
    new = copy.deepcopy(run)
    section = next(section for section in new["sections"] if section["operation"] == operation)
    row = section["rows"][row_index]
    row["us"]["fgemm"] *= factor
    derive(row, section["unit"], new["peaks"])
    return new


@pytest.fixture
def run():
    return json.loads(RECORDED_RUN.read_text())


def test_a_slow_down_beyond_the_threshold_is_a_regression_and_nothing_else_is(run):
    new = slowed_down(slowed_down(run, "gemm", 1, 1.25), "masked", 0, 1.03)
    comparison = compare_runs(run, new, threshold=0.05)
    assert [(change.operation, change.label) for change in comparison.regressions()] == [("gemm", "64 × 512 × 512")]
    regression = comparison.regressions()[0]
    assert regression.change == pytest.approx(1 / 1.25 - 1)
    masked = next(change for change in comparison.changes if change.operation == "masked")
    assert masked.change == pytest.approx(1 / 1.03 - 1) and not masked.regression
    assert len(comparison.changes) == sum(len(section["rows"]) for section in run["sections"])
    flagged = [line for line in comparison.text().splitlines() if "REGRESSION" in line]
    assert len(flagged) == 1 and "64 × 512 × 512" in flagged[0] and "-20.0%" in flagged[0]


def test_the_command_exits_1_on_a_regression_and_writes_the_comparison(run, tmp_path, capsys):
    old_path, new_path, same_path = tmp_path / "old.json", tmp_path / "new.json", tmp_path / "same.json"
    old_path.write_text(json.dumps(run))
    new_path.write_text(json.dumps(slowed_down(run, "per_token", 0, 2.0)))
    same_path.write_text(json.dumps(run))
    with pytest.raises(SystemExit) as exit_status:
        main(["--compare", str(old_path), str(new_path), "--out", str(tmp_path / "cmp")])
    assert exit_status.value.code == 1
    assert "1 of 6 shapes slower by more than 5.0%" in capsys.readouterr().out
    page = (tmp_path / "cmp" / "compare.html").read_text()
    assert page.count("<tr class=regression>") == 1 and "-50.0%" in page
    with pytest.raises(SystemExit) as exit_status:
        main(["--compare", str(old_path), str(same_path)])
    assert exit_status.value.code == 0
