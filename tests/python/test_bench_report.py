"""The benchmark's HTML report, generated from a recorded run (data/bench_run_cpu.json: a CPU run of every
operation on a tiny table): one chart per section, and the JSON's numbers in its tables."""

import json
import sys
from pathlib import Path

import pytest

from bench_html import ReportReader, shown_value
from fgemm.bench.report import report_html

RECORDED_RUN = Path(__file__).resolve().parent / "data" / "bench_run_cpu.json"


@pytest.fixture
def run():
    return json.loads(RECORDED_RUN.read_text())


def json_value(row, key):
    value = row
    for part in key.split("."):
        value = value[part]
    return value


def expected_chart_sections(section):
    # throughput, fraction of the roofline, the speed-up where there are baselines, the roofline for a GEMM
    return 2 + bool(section["baselines"]) + (section["unit"] == "TFLOPS")


def test_every_section_has_one_chart(run):
    reader = ReportReader(report_html(run))
    assert reader.charts_per_section == [1] * sum(map(expected_chart_sections, run["sections"]))
    assert {section["operation"] for section in run["sections"]} == {
        "gemm", "contiguous", "masked", "per_token", "per_block"}


def test_the_tables_show_the_numbers_of_the_json(run):
    reader = ReportReader(report_html(run))
    checked = 0
    for section in run["sections"]:
        sides = ["fgemm"] + section["baselines"]
        keys = ["us.fgemm", "roofline", "roofline_fraction", "calc_diff"] + [f"throughput.{side}" for side in sides] \
            + [f"speedup.{name}" for name in section["baselines"]]
        for index, row in enumerate(section["rows"]):
            for key in keys:
                shown = shown_value(reader.cells[(section["operation"], index, key)])
                # The tables round to 3 or 4 significant digits (a percentage to 0.1).
                assert shown == pytest.approx(json_value(row, key), rel=6e-3, abs=6e-4 if key == "roofline_fraction"
                                              else 0), (section["operation"], row["label"], key)
                checked += 1
    assert checked == 50  # every cell above: a missing one would be a KeyError, not a pass
    assert shown_value(reader.cells[(None, None, "peaks.tflops")].split()[0]) == pytest.approx(
        run["peaks"]["tflops"], rel=1e-3)


def test_the_derived_numbers_follow_from_the_times(run):
    gemm = next(section for section in run["sections"] if section["operation"] == "gemm")
    row = gemm["rows"][1]
    assert row["throughput"]["fgemm"] == pytest.approx(row["flops"] / row["us"]["fgemm"] / 1e6)
    assert row["speedup"]["torch-bf16"] == pytest.approx(row["us"]["torch-bf16"] / row["us"]["fgemm"])
    memory_bound = row["flops"] / row["bytes"] * run["peaks"]["gbps"] / 1e3
    assert row["roofline"] == pytest.approx(min(memory_bound, run["peaks"]["tflops"]))
    assert row["roofline_fraction"] == pytest.approx(row["throughput"]["fgemm"] / row["roofline"])


def test_without_matplotlib_the_report_is_tables_and_says_so(run, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    page = report_html(run)
    reader = ReportReader(page)
    assert reader.charts_per_section == [] and "<svg" not in page
    assert "Tables only: matplotlib is not installed" in "".join(reader.text)
    assert len({table for table, _, _ in reader.cells if table}) == len(run["sections"])
