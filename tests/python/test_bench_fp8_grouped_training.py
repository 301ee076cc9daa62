"""bench/bench_fp8_grouped_training.py's dry run: a step of fgemm.nn.GroupedLinear and of the BF16 experts on
tiny CPU tensors, checked and timed, and the routing of its rows."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_fp8_grouped_training  # noqa: E402


def test_the_dry_run_checks_every_side_against_the_loop(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert bench_fp8_grouped_training.main(["--dry-run", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    rows, sides = result["rows"], result["sides"]
    assert sides[:3] == ["fp8", "fp8_later", "loop"]
    bf16_sides = sides[2:]
    assert [row["fuse_wgrad_accumulation"] for row in rows] == [False, True]
    for side in ["fp8"] + bf16_sides[1:]:
        assert all(row[f"{side}_{name}_calc_diff"] < bench_fp8_grouped_training.MAX_DIFF
                   for row in rows for name in ("y", "dx", "dw"))
    assert all(row[f"{side}_kernel_us"] > 0 for row in rows for side in sides)
    assert set(result["summary"]) == {f"{prefix}kernel_speedup_over_{side}_{stat}" for side in bf16_sides
                                      for prefix in ("", "later_") for stat in ("geomean", "min")}
    assert "| 3 | 300 | 272 | 144 | yes |" in capsys.readouterr().out


@pytest.mark.parametrize("experts,rows", [(8, 32768), (32, 32768), (3, 300)])
def test_routed_rows_are_uneven_and_sum_to_the_rows(experts, rows):
    splits = bench_fp8_grouped_training.routed_splits(experts, rows, seed=1)
    assert len(splits) == experts and sum(splits) == rows and min(splits) >= 0
    assert max(splits) - min(splits) > rows / experts / 5  # a router's loads, not equal shares
    assert splits == bench_fp8_grouped_training.routed_splits(experts, rows, seed=1)


def test_the_breakdown_is_refused_on_the_dry_run(capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench_fp8_grouped_training.main(["--dry-run", "--breakdown"])
    assert exit_info.value.code == 2 and "--breakdown needs the GPU" in capsys.readouterr().err
