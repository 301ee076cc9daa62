"""The fuzz runner (tests/fuzz/fuzz_gemm.py): its cases, its checks, and a smoke run on the CPU."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

FUZZ = Path(__file__).resolve().parents[1] / "fuzz"
sys.path.insert(0, str(FUZZ))

import fuzz_gemm  # noqa: E402
from fuzz_cases import EDGE_ROWS, LAYOUTS, LIMITS, case_indices, draw_case, layout_of, layout_of_name  # noqa: E402
from fuzz_checks import check, tolerance  # noqa: E402
from fuzz_ops import Outcome  # noqa: E402
from fuzz_tensors import poisoned_storage  # noqa: E402


def run_script(*args, timeout=120):
    return subprocess.run([sys.executable, str(FUZZ / "fuzz_gemm.py"), *args], capture_output=True, text=True,
                          timeout=timeout)


def test_every_layout_passes_a_smoke_run_on_the_cpu(tmp_path):
    result = run_script("--device", "cpu", "--seed", "1", "--cases-per-layout", "3", "--json", str(tmp_path / "r.json"))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    summary = json.loads((tmp_path / "r.json").read_text())
    assert set(summary["layouts"]) == {layout.name for layout in LAYOUTS}
    assert all(row == dict(row, cases=3, failures=0) for row in summary["layouts"].values())
    assert summary["failures"] == []


def test_the_int8_layouts_pass_every_recipe_on_the_cpu(tmp_path):
    int8 = [layout for layout in LAYOUTS if layout.dtype == "int8"]
    cases = [draw_case(1, index, LIMITS["cpu"], fuzz_gemm.DEFAULT_SHAPES_PER_LAYOUT)
             for index in case_indices(int8, 12)]
    assert {(case["layout"], case["recipe"]) for case in cases} == {
        (layout.name, recipe) for layout in int8 for recipe in ("exact", "token", "block")
        if recipe != "exact" or layout.kind == "dense"}
    result = run_script("--device", "cpu", "--seed", "1", "--cases-per-layout", "12", "--ops", "*int8*",
                        "--json", str(tmp_path / "r.json"))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    summary = json.loads((tmp_path / "r.json").read_text())
    assert {name: row["failures"] for name, row in summary["layouts"].items()} == {layout.name: 0 for layout in int8}


def test_the_fp8_weight_gradient_layouts_pass_on_the_cpu(tmp_path):
    result = run_script("--device", "cpu", "--seed", "5", "--cases-per-layout", "30", "--ops", "fp8_gemm_nt_1d1d",
                        "k_grouped_fp8*", "--json", str(tmp_path / "r.json"))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    summary = json.loads((tmp_path / "r.json").read_text())
    assert {name: (row["cases"], row["failures"]) for name, row in summary["layouts"].items()} == {
        "fp8_gemm_nt_1d1d": (30, 0), "k_grouped_fp8_gemm_nt_contiguous": (30, 0)}


@pytest.mark.gpu
def test_every_layout_passes_a_smoke_run_on_the_gpu(tmp_path):
    result = run_script("--device", "cuda", "--seed", "1", "--cases-per-layout", "4", "--jobs", "4",
                        "--json", str(tmp_path / "r.json"), timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    summary = json.loads((tmp_path / "r.json").read_text())
    assert all(row == dict(row, cases=4, failures=0) for row in summary["layouts"].values())


def test_a_case_replays_alone():
    index = len(LAYOUTS)  # the second case of fp8_gemm_nt, the first layout
    result = run_script("--device", "cpu", "--replay", f"4:{index}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.dumps(draw_case(4, index, LIMITS["cpu"], fuzz_gemm.DEFAULT_SHAPES_PER_LAYOUT)) in result.stdout


def test_an_unknown_layout_is_refused():
    result = run_script("--device", "cpu", "--ops", "bf16_gemm_xy")
    assert result.returncode != 0 and "--ops: bf16_gemm_xy names no layout" in result.stderr


def test_a_wrong_result_fails_the_run_with_its_replay_command(monkeypatch, capsys):
    import fgemm

    real = fgemm.fp8_gemm_nt

    def off_by_one(a, b, d, c=None):
        real(a, b, d, c)
        d += 1

    monkeypatch.setattr(fgemm, "fp8_gemm_nt", off_by_one)
    assert fuzz_gemm.main(["--device", "cpu", "--seed", "2", "--cases-per-layout", "6", "--ops", "fp8_gemm_nt"]) == 1
    out = capsys.readouterr().out
    failed = [index for index in case_indices([layout_of_name("fp8_gemm_nt")], 6)
              if draw_case(2, index, LIMITS["cpu"], fuzz_gemm.DEFAULT_SHAPES_PER_LAYOUT)["m"] > 0]
    assert failed, "seed 2 should draw cases with rows"
    for index in failed:
        assert f"FAIL 2:{index} fp8_gemm_nt" in out
        assert f"--replay 2:{index}" in out


# ---------------------------------------------------------------------------------------------- cases


def test_a_case_depends_on_its_seed_and_index_only():
    limits = LIMITS["cuda"]
    assert draw_case(7, 123, limits, 4) == draw_case(7, 123, limits, 4)
    assert draw_case(7, 123, limits, 4) != draw_case(8, 123, limits, 4)
    assert layout_of(123) == layout_of_name(draw_case(7, 123, limits, 4)["layout"])
    # The indices of a layout are the same whichever layouts a run selects.
    alone = case_indices([layout_of_name("bf16_gemm_tn")], 5)
    assert alone == [i for i in case_indices(LAYOUTS, 5) if layout_of(i).name == "bf16_gemm_tn"]


def draw_many(name, count=400, seed=3):
    return [draw_case(seed, index, LIMITS["cuda"], 4) for index in case_indices([layout_of_name(name)], count)]


def test_rows_cover_the_tile_edges_and_the_whole_range():
    rows = {case["m"] for case in draw_many("bf16_gemm_nt")}
    assert set(EDGE_ROWS) <= rows
    assert max(rows) > 2500


def test_n_and_k_are_mostly_not_multiples_of_64_and_fp8_and_int8_k_is_a_multiple_of_16():
    for name, k_multiple in [("fp16_gemm_nn", 1), ("fp8_gemm_nt", 16), ("m_grouped_bf16_gemm_nt_masked", 1),
                             ("int8_gemm_nt", 16), ("m_grouped_int8_gemm_nt_contiguous", 16)]:
        shapes = {(case["n"], case["k"]) for case in [draw_case(seed, LAYOUTS.index(layout_of_name(name)),
                                                                LIMITS["cuda"], 1) for seed in range(60)]}
        assert sum(n % 64 != 0 for n, _ in shapes) > len(shapes) // 2
        assert sum(k % 64 != 0 for _, k in shapes) > len(shapes) // 2
        assert all(k % k_multiple == 0 for _, k in shapes)


def test_contiguous_cases_have_both_forms_empty_experts_padding_and_unaligned_ends():
    cases = draw_many("m_grouped_bf16_gemm_nn_contiguous")
    assert {case["form"] for case in cases} == {"m_indices", "psum"}
    assert any(0 in case["sizes"] for case in cases)
    assert any(case["m_sum"] > case["starts"][-1] + case["sizes"][-1] for case in cases), "no tail padding"
    assert any(case["form"] == "psum" and any(size % 128 for size in case["sizes"][:-1]) for case in cases)
    psums = [case for case in cases if case["form"] == "psum"]
    assert any(end % 128 and not size for case in psums for end, size in zip(case["psum"], case["sizes"]))
    for case in cases:
        assert all(start % 128 == 0 for start in case["starts"])
        ends = [start + size for start, size in zip(case["starts"], case["sizes"])]
        assert all(end <= next_start for end, next_start in zip(ends, case["starts"][1:]))
        assert ends[-1] <= case["m_sum"]


def test_masked_and_k_grouped_cases_have_empty_groups():
    masked = draw_many("m_grouped_fp8_gemm_nt_masked")
    assert any(0 in case["masked_m"] for case in masked)
    assert any(case["m_max"] in case["masked_m"] and case["m_max"] > 0 for case in masked)
    assert all(max(case["masked_m"]) <= case["m_max"] and case["expected_m"] >= 1 for case in masked)
    k_grouped = draw_many("k_grouped_fp16_gemm_tn_contiguous")
    assert any(0 in case["ks"] for case in k_grouped)
    assert all(k % 128 == 0 for case in k_grouped for k in case["ks"])
    assert {case["c"] for case in k_grouped} == {"none", "separate", "in_place"}


def test_fp8_1d1d_cases_draw_both_scale_layouts_and_the_k_grouped_fp32_ones_always_a_c():
    dense = draw_many("fp8_gemm_nt_1d1d")
    assert {(case["sfa"], case["sfb"]) for case in dense} == {
        (sfa, sfb) for sfa in ("mn-major", "row-major") for sfb in ("mn-major", "row-major")}
    sixteen_bit_c = ("none", "separate", "own_type", "in_place")
    assert {(case["out"], case["c"]) for case in dense} == {
        *(("bf16", c) for c in sixteen_bit_c), ("fp32", "none"), ("fp32", "separate"), ("fp32", "in_place")}
    k_grouped = draw_many("k_grouped_fp8_gemm_nt_contiguous")
    assert {(case["out"], case["c"]) for case in k_grouped} == {
        ("fp32", "separate"), ("fp32", "in_place"), *(("bf16", c) for c in sixteen_bit_c)}
    assert any(0 in case["ks"] for case in k_grouped)


def test_only_the_cpus_1d1d_path_has_the_wider_bound_of_its_bf16_operands():
    one_d_one_d, block = layout_of_name("fp8_gemm_nt_1d1d"), layout_of_name("fp8_gemm_nt")
    assert tolerance(one_d_one_d, "fp32", "cpu").accumulation == 2.0**-7
    assert tolerance(one_d_one_d, "fp32", "cuda") == tolerance(block, "fp32", "cuda") == tolerance(block, "fp32", "cpu")


def test_int8_cases_draw_every_recipe_scale_shape_output_c_and_bias():
    dense = draw_many("int8_gemm_nt")
    exact = [case for case in dense if case["recipe"] == "exact"]
    assert exact and all(dict(case, out="int32", c="none", bias="none") == case for case in exact)
    scaled = [case for case in dense if case["recipe"] != "exact"]
    assert {(case["out"], case["c"], case["bias"]) for case in scaled} == {
        (out, c, bias) for out in ("bf16", "fp16", "fp32") for c in ("none", "separate", "own_type", "in_place")
        for bias in ("none", "fp32", out) if out != "fp32" or c != "own_type"}
    assert {(case["sa"], case["sb"]) for case in dense if case["recipe"] == "token"} == {
        (sa, sb) for sa in ("vector", "column", "one") for sb in ("vector", "row", "one")}
    assert {case["extremes"] for case in dense} == {False, True}
    for name, token_scales in [("m_grouped_int8_gemm_nt_contiguous", ("vector", "column", "one")),
                               ("m_grouped_int8_gemm_nt_masked", ("vector", "column"))]:
        cases = draw_many(name)
        assert {case["recipe"] for case in cases} == {"token", "block"}
        assert {(case["sa"], case["sb"]) for case in cases if case["recipe"] == "token"} == {
            (sa, sb) for sa in token_scales for sb in ("vector", "one")}


# ---------------------------------------------------------------------------------------------- checks


def outcome_of(rows, n, kept_rows=()):
    """A correct BF16 D of `rows` x n in a poisoned storage, with kept_rows left NaN."""
    storage, d = poisoned_storage((rows, n), torch.bfloat16, "cpu", 1)
    expected = torch.randn(rows, n, dtype=torch.float64)
    kept = torch.zeros(rows, dtype=torch.bool)
    kept[list(kept_rows)] = True
    d[~kept] = expected[~kept].to(torch.bfloat16)
    return Outcome(storage, d, expected, expected.abs(), kept)


BF16 = tolerance(layout_of_name("bf16_gemm_nt"), "bf16", "cuda")
EXACT = tolerance(layout_of_name("int8_gemm_nt"), "int32", "cuda")


def test_a_correct_result_passes():
    problems, diff = check(outcome_of(70, 33, kept_rows=[3, 69]), BF16)
    assert problems == [] and diff < 1e-5


@pytest.mark.parametrize("spoil,message", [
    (lambda o: o.storage[0, 0].fill_(0), "outside D's view were written"),
    (lambda o: o.storage[5, 33].fill_(0), "outside D's view were written"),
    (lambda o: o.d[3, 0].fill_(0), "rows that must keep their values were written"),
    (lambda o: o.d[10, 7].fill_(float("nan")), "NaN in 1 elements"),
    (lambda o: o.d[10, 7].mul_(1.05), "1 elements beyond their bound"),
    (lambda o: o.d.mul_(1.01), "calc_diff"),
])
def test_a_wrong_result_is_reported(spoil, message):
    outcome = outcome_of(70, 33, kept_rows=[3, 69])
    spoil(outcome)
    problems, _ = check(outcome, BF16)
    assert any(message in problem for problem in problems), problems


def exact_outcome(rows, n):
    """A correct int32 D of `rows` x n in a storage poisoned with -2^31."""
    storage, d = poisoned_storage((rows, n), torch.int32, "cpu", 1)
    expected = torch.randint(-2**24, 2**24, (rows, n), dtype=torch.int32)
    d.copy_(expected)
    return Outcome(storage, d, expected.double(), torch.zeros(rows, n, dtype=torch.float64),
                   torch.zeros(rows, dtype=torch.bool))


def test_a_correct_exact_product_passes():
    problems, _ = check(exact_outcome(20, 9), EXACT)
    assert problems == []


@pytest.mark.parametrize("spoil,message", [
    (lambda o: o.d[4, 5].add_(1), "1 elements beyond their bound"),
    (lambda o: o.d[4, 5].fill_(-2**31), "the sentinel -2^31 in 1 elements"),
    (lambda o: o.storage[0, 0].fill_(0), "outside D's view were written"),
])
def test_a_wrong_exact_product_is_reported(spoil, message):
    outcome = exact_outcome(20, 9)
    spoil(outcome)
    problems, _ = check(outcome, EXACT)
    assert any(message in problem for problem in problems), problems
