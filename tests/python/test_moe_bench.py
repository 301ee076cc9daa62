"""bench/bench_moe.py on a machine without two GPUs: its options, and a clear exit instead of a crash."""

import pathlib
import subprocess
import sys

import pytest
import torch

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "bench_moe.py"
sys.path.insert(0, str(BENCH.parent))
import bench_moe  # noqa: E402


@pytest.mark.parametrize("choice, tokens, capacity", [
    ("auto", 1, 1), ("auto", 16, 10), ("auto", 64, 12), ("auto", 128, 16), ("tokens", 128, 128), ("5", 64, 5),
])
def test_decode_capacity(choice, tokens, capacity):
    assert bench_moe.decode_capacity(choice, tokens) == capacity


def test_options_parse_into_the_shapes_timed():
    args = bench_moe.parse_args(["--decode-tokens", "1,128", "--prefill-tokens", "0", "--json", "x.json"])
    assert (args.decode_tokens, args.prefill_tokens, args.gpus, args.json) == ([1, 128], 0, 2, "x.json")


def test_table_shows_the_bare_exchange_beside_the_layers_steps(capsys):
    steps = {"dispatch": 2.8, "experts": 4.4, "combine": 3.9, "layer": 11.0, "tokens_per_s": 7.4e5,
             "expert_tflops": 647.0}
    row = {"mode": "prefill", "tokens_per_rank": 4096, "ranks": 2, "capacity": None,
           "dispatch_bytes_per_rank": 242.2e6, "combine_bytes_per_rank": 469.8e6, "bare_exchange_ms": 0.5,
           "bare_exchange_gbps": 242.2, "fgemm": steps, "bf16": dict(steps, layer=30.6)}
    bench_moe.print_table([row], "GPU")
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split(" | ")[4:6] == ["bare a2a", "GB/s off GPU"]
    assert lines[2].split(" | ")[3:6] == ["242.2", "0.500", "242"]
    assert lines[2].endswith("2.78x")


@pytest.mark.skipif(torch.cuda.device_count() >= 2, reason="this machine could run the benchmark")
def test_without_two_gpus_it_says_so():
    result = subprocess.run([sys.executable, str(BENCH), "--repeats", "1"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 1
    assert f"needs 2 CUDA devices, torch sees {torch.cuda.device_count()}" in result.stderr
