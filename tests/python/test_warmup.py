"""fgemm.warmup without a GPU: kernels compiled into the disk cache, a second process finding all of them there,
and bad arguments refused by name."""

import json
import os
import subprocess
import sys

import pytest
import torch

import fgemm

# Small shapes, so that their kernels compile in well under a second each.
SHAPES = [("fp8_gemm_nt", 512, 256), {"op": fgemm.m_grouped_fp8_gemm_nt_masked, "n": 256, "k": 128,
                                       "num_groups": 3, "out_dtype": torch.float32}]
M_RANGE = (1, 300)


def warm_in_a_process(cache_dir):
    """fgemm.warmup of SHAPES (written out) in a fresh process with the disk cache at cache_dir: the kernels."""
    program = ("import json, fgemm, torch\n"
               "shapes = [('fp8_gemm_nt', 512, 256), {'op': 'm_grouped_fp8_gemm_nt_masked', 'n': 256, 'k': 128,\n"
               "          'num_groups': 3, 'out_dtype': torch.float32}]\n"
               f"kernels = fgemm.warmup(shapes, {M_RANGE!r}, load=False)\n"
               "print(json.dumps([k._asdict() for k in kernels]))\n")
    env = dict(os.environ, FGEMM_CACHE_DIR=str(cache_dir))
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_kernels_compile_into_the_cache_and_a_second_process_finds_them(tmp_path, monkeypatch):
    monkeypatch.setenv("FGEMM_CACHE_DIR", str(tmp_path))
    kernels = fgemm.warmup(SHAPES, M_RANGE, load=False, threads=2)
    names = [kernel.name for kernel in kernels]
    assert len(names) == len(set(names)) >= 3
    assert all(kernel.compiled and kernel.seconds > 0 for kernel in kernels)
    assert any("_normal_n512_k256_bf16_" in name for name in names)
    assert any("_masked_n256_k128_f32_" in name for name in names)
    assert len(list(tmp_path.iterdir())) == len(kernels)

    again = warm_in_a_process(tmp_path)
    assert sorted(kernel["name"] for kernel in again) == sorted(names)
    assert not any(kernel["compiled"] for kernel in again)


def test_the_sixteen_bit_gemms_take_the_few_row_kernel_and_the_tiles(tmp_path, monkeypatch):
    monkeypatch.setenv("FGEMM_CACHE_DIR", str(tmp_path))
    shapes = [("bf16_gemm_nt", 512, 256), {"op": fgemm.fp16_gemm_tn, "n": 264, "k": 100, "out_dtype": torch.float32,
                                            "with_c": True}, ("m_grouped_bf16_gemm_nt_masked", 256, 128, 2),
              {"op": "m_grouped_fp16_gemm_nn_contiguous", "n": 256, "k": 128, "use_psum_layout": True,
               "packed_d": True}]
    names = [kernel.name for kernel in fgemm.warmup(shapes, (1, 200), load=False, threads=2)]
    assert len(names) == len(set(names))
    # bf16_gemm_nt of up to eight rows: the few-row kernel, one configuration; the others: the tiles.
    assert [name for name in names if name.startswith("fgemm_sm90_few_rows_")] == [
        "fgemm_sm90_few_rows_bfloat16_dbfloat16_w8u2s1"]
    assert any("_bf16_normal_nt_n512_k256_bf16_" in name for name in names)
    assert any("_fp16_normal_tn_n264_k100_f32_c_ring" in name for name in names)
    assert any("_bf16_masked_nt_n256_k128_bf16_" in name for name in names)
    assert any("_fp16_contiguous_psum_packed_d_nn_n256_k128_fp16_" in name for name in names)


def test_progress_and_logging(tmp_path, monkeypatch, caplog, capsys):
    monkeypatch.setenv("FGEMM_CACHE_DIR", str(tmp_path))
    monkeypatch.setitem(sys.modules, "tqdm", None)  # the plain progress line
    with caplog.at_level("DEBUG", logger="fgemm"):
        kernels = fgemm.warmup([("fp8_gemm_nt", 512, 256)], (1, 64), load=False, progress=True)
    assert f"{len(kernels)}/{len(kernels)} kernels" in capsys.readouterr().err
    messages = [record.getMessage() for record in caplog.records]
    assert sum("compiled in" in message for message in messages) == len(kernels)
    assert any(f"{len(kernels)} kernels ({len(kernels)} compiled, 0 from the cache)" in m for m in messages)


@pytest.mark.parametrize("call, error, message", [
    (lambda: fgemm.warmup([("fp8_gemm_nt", 512, 250)], load=False), ValueError,
     "argument 'shapes[0].k' must be a positive multiple of 16, got 250"),
    (lambda: fgemm.warmup([("fp8_gemm", 512, 256)], load=False), ValueError, "argument 'shapes[0].op' expected one of"),
    (lambda: fgemm.warmup([(len, 512, 256)], load=False), TypeError, "argument 'shapes[0].op'"),
    (lambda: fgemm.warmup([("fp8_gemm_nt", 512)], load=False), TypeError, "argument 'shapes[0]' expected (op, n, k)"),
    (lambda: fgemm.warmup([("fp8_gemm_nt", 512, 256, 4)], load=False), ValueError,
     "argument 'shapes[0].num_groups' matters for the masked layout only"),
    (lambda: fgemm.warmup([{"op": "fp8_gemm_nt", "n": 8, "k": 16, "dtype": 1}], load=False), ValueError,
     "argument 'shapes[0]' has unknown keys ['dtype']"),
    (lambda: fgemm.warmup([{"op": "fp8_gemm_nt", "n": 8, "k": 16, "out_dtype": torch.float16}], load=False),
     ValueError, "argument 'shapes[0].out_dtype' expected torch.bfloat16 or torch.float32"),
    (lambda: fgemm.warmup([{"op": "fp16_gemm_nt", "n": 8, "k": 16, "out_dtype": torch.bfloat16}], load=False),
     ValueError, "argument 'shapes[0].out_dtype' expected torch.float16 or torch.float32"),
    (lambda: fgemm.warmup([{"op": "bf16_gemm_nn", "n": 8, "k": 16, "with_c": 1}], load=False), TypeError,
     "argument 'shapes[0].with_c' expected a bool"),
    (lambda: fgemm.warmup([("m_grouped_bf16_gemm_nt_contiguous", 8, 16, 2)], load=False), ValueError,
     "argument 'shapes[0].num_groups' matters for the masked layout only"),
    (lambda: fgemm.warmup([("bf16_gemm_nt", 8, 0)], load=False), ValueError, "argument 'shapes[0].k' must be >= 1"),
    (lambda: fgemm.warmup([{"op": "bf16_gemm_nt", "n": 8, "k": 16, "use_psum_layout": True}], load=False), ValueError,
     "argument 'shapes[0].use_psum_layout' is for the m-grouped contiguous GEMMs only"),
    (lambda: fgemm.warmup([{"op": "m_grouped_bf16_gemm_nt_contiguous", "n": 8, "k": 16, "packed_d": "yes"}],
                          load=False), TypeError, "argument 'shapes[0].packed_d' expected a bool"),
    (lambda: fgemm.warmup([("fp8_gemm_nt", 512, 256)], (5, 4), load=False), ValueError, "argument 'm_max'"),
    (lambda: fgemm.warmup([("fp8_gemm_nt", 512, 256)], 16, load=False), TypeError, "argument 'm_range'"),
    (lambda: fgemm.warmup("fp8_gemm_nt", load=False), TypeError, "argument 'shapes' expected an iterable"),
    (lambda: fgemm.warmup([], sfa_layout="column", load=False), ValueError, "argument 'sfa_layout'"),
    (lambda: fgemm.warmup([], device="cpu"), ValueError, "argument 'device' must be a Hopper (sm_90) CUDA device"),
])
def test_bad_arguments_are_named(call, error, message):
    with pytest.raises(error) as raised:
        call()
    assert message in str(raised.value)
