"""python -m fgemm.bench run for real on a tiny shape table (the whole pipeline: timing, peaks, JSON, HTML), its
argument checks, and the built-in shape tables."""

import json
import subprocess
import sys

import pytest
import torch

from bench_html import ReportReader
from fgemm.bench import tables
from fgemm.bench.cli import best_peaks, main
from fgemm.bench.progress import progress

TINY_TABLE = {
    "about": "a tiny table for the tests",
    "normal": [{"m": 16, "n": 256, "k": 256}, {"m": 64, "n": 512, "k": 512}],
    "m_grouped_contiguous": [{"groups": 2, "m_per_group": 128, "n": 256, "k": 256}],
    "m_grouped_masked": [{"groups": 2, "m_per_group": 32, "n": 256, "k": 256}],
    "quantize": [{"m": 64, "k": 512}],
}


def run_bench(args, tmp_path):
    """The command in a process of its own, as a user runs it."""
    table = tmp_path / "tiny.json"
    table.write_text(json.dumps(TINY_TABLE))
    command = [sys.executable, "-m", "fgemm.bench", "--table", str(table), "--out", str(tmp_path / "out"), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_a_cpu_run_writes_the_json_and_the_report(tmp_path):
    done = run_bench(["--device", "cpu", "--runs", "1"], tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "out" / "report-cpu.json").read_text())
    assert result["machine"]["device"] == "cpu" and result["machine"]["omp_wait_policy"] == "PASSIVE"
    assert result["peaks"]["tflops"] > 0 and result["peaks"]["gbps"] > 0
    sections = {section["operation"]: section for section in result["sections"]}
    assert list(sections) == ["gemm", "contiguous", "masked", "per_token", "per_block"]
    assert sections["gemm"]["baselines"] == ["torch-fp32", "torch-bf16"]
    assert sections["per_block"]["baselines"] == ["torch-ops"]
    for section in sections.values():
        for row in section["rows"]:
            assert all(us > 0 for us in row["us"].values())
            # fgemm's result against FP32 torch: about 1e-6 for a GEMM (BF16 out), 1e-4 for FP8 codes
            assert row["calc_diff"] < 1e-3, (section["operation"], row["label"])
    assert [row["label"] for row in sections["gemm"]["rows"]] == ["16 × 256 × 256", "64 × 512 × 512"]
    page = (tmp_path / "out" / "report-cpu.html").read_text()
    assert ReportReader(page).charts_per_section == [1] * (4 * 3 + 3 * 2)
    assert "wrote" in done.stdout and "gemm" in done.stderr  # the progress bar's description


def test_the_gpu_is_refused_where_torch_sees_none(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit) as exit_status:
        main(["--device", "cuda"])
    assert exit_status.value.code == "fgemm.bench: --device cuda: torch sees no CUDA device"


def test_without_tqdm_the_progress_is_one_line_rewritten(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm now raises ImportError
    assert list(progress(["a", "b", "c"], "gemm")) == ["a", "b", "c"]
    assert capsys.readouterr().err == "\rgemm: 0/3\rgemm: 1/3\rgemm: 2/3\rgemm: 3/3\n"


@pytest.mark.gpu
def test_a_gpu_run_writes_the_json_and_the_report(tmp_path):
    done = run_bench(["--device", "cuda"], tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "out" / "report-cuda.json").read_text())
    sections = {section["operation"]: section for section in result["sections"]}
    assert sections["gemm"]["baselines"] == ["cublaslt"] and result["sfa_layout"] == "mn-major"
    assert all(row["calc_diff"] < 1e-5 for section in sections.values() if section["unit"] == "TFLOPS"
               for row in section["rows"])
    assert (tmp_path / "out" / "report-cuda.html").exists()


@pytest.mark.parametrize("args, message", [
    (["--precision", "bf16"], "--precision bf16: not implemented; fgemm computes fp8"),
    (["--runs", "0"], "--runs: expected a positive number, got 0"),
    (["--threshold", "5"], "--threshold: expected a fraction between 0 and 1, got 5.0"),
])
def test_bad_options_are_refused_naming_the_option(args, message, capsys):
    with pytest.raises(SystemExit) as exit_status:
        main(args)
    assert exit_status.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--op", "gemm,transpose"], "--op: expected operations among gemm, contiguous, masked, per_token, per_block "
                                 "or all, got transpose"),
    (["--table", "no_such_table"], "--table: expected a built-in table (cpu, decode, precision_anchors, quantize, "
                                   "seed) or a JSON file, got 'no_such_table'"),
    (["--baselines", "cublaslt"], "--baselines: expected names among torch-bf16, torch-fp32, torch-ops (on cpu)"),
    (["--table", "quantize", "--op", "gemm"], "--table quantize: no section for the operations gemm"),
])
def test_bad_choices_are_refused_before_anything_runs(args, message, monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")  # no restart of this process for the policy
    with pytest.raises(SystemExit) as exit_status:
        main(["--device", "cpu", *args])
    assert exit_status.value.code.startswith(f"fgemm.bench: {message}")


def test_a_table_entry_without_its_dimensions_is_refused(tmp_path):
    table = tmp_path / "broken.json"
    table.write_text(json.dumps({"normal": [{"m": 64, "n": 128}]}))
    with pytest.raises(ValueError, match=r"entry 0 of 'normal' needs integer k"):
        tables.section_entries(tables.load_table(str(table)), "gemm", "fp8", str(table))


def test_the_built_in_tables_hold_the_seed_shapes():
    seed = tables.load_table("seed")
    assert [len(tables.section_entries(seed, op, "fp8", "seed")) for op in ("gemm", "contiguous", "masked")] == \
        [18, 4, 6]
    assert seed["normal"][0] == {"m": 64, "n": 2112, "k": 7168, "h800_tflops": 206, "h100_deepgemm_tflops": 175,
                                 "h100_cublaslt_blockwise_tflops": 86}
    assert "DeepGEMM" in seed["about"]
    # Of the precision anchors' FP8 GEMMs, those fgemm computes: NT, BF16 out, no accumulation, 1D2D.
    anchors = tables.section_entries(tables.load_table("precision_anchors"), "gemm", "fp8", "precision_anchors")
    assert len(anchors) == 28
    assert tables.section_entries(tables.load_table("decode"), "per_token", "fp8", "decode") is None
    for name in tables.built_in_tables():
        table = tables.load_table(name)
        for operation in tables.SECTION_OF:
            tables.section_entries(table, operation, "fp8", name)  # every entry has its dimensions


def test_the_peaks_are_the_higher_of_the_measurements_before_and_after_the_run():
    before = dict(tflops=2.0, tflops_how="matmul before", gbps=30.0, gbps_how="copy before")
    after = dict(tflops=2.5, tflops_how="matmul after", gbps=20.0, gbps_how="copy after")
    assert best_peaks(before, after) == dict(tflops=2.5, tflops_how="matmul after", gbps=30.0,
                                             gbps_how="copy before")
