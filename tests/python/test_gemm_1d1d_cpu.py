"""The FP8 weight-gradient GEMMs (recipe 1D1D) on the CPU backend, against float64 (checks_1d1d.py)."""

import pytest

from checks_1d1d import check_k_grouped, check_normal


@pytest.mark.parametrize("out", ["bf16", "fp32"])
@pytest.mark.parametrize("mn_major", [False, True])
def test_normal(out, mn_major):
    import torch

    dtype = torch.bfloat16 if out == "bf16" else torch.float32
    for m, n, k in [(1, 8, 16), (130, 264, 400), (257, 136, 1024)]:
        check_normal(m, n, k, dtype, "cpu", mn_major=mn_major)


@pytest.mark.parametrize("out,c_mode", [("fp32", "c"), ("fp32", "d"), ("bf16", "c16"), ("bf16", "d")])
def test_normal_accumulates_onto_c(out, c_mode):
    import torch

    check_normal(129, 200, 384, torch.bfloat16 if out == "bf16" else torch.float32, "cpu", c_mode=c_mode)


# The weight gradient accumulated in FP32 onto a C apart or in place, and the BF16 gradient alone, onto an FP32 C
# or in place.
K_GROUPED_OUTPUTS = [("c", "fp32"), ("d", "fp32"), (None, "bf16"), ("c", "bf16"), ("d", "bf16")]


@pytest.mark.parametrize("ks", [[128], [128, 0, 384, 256], [0, 0], [256] * 3])
@pytest.mark.parametrize("c_mode,out", K_GROUPED_OUTPUTS)
def test_k_grouped(ks, c_mode, out):
    import torch

    check_k_grouped(ks, 72, 136, "cpu", c_mode=c_mode, out=torch.bfloat16 if out == "bf16" else torch.float32)


def test_k_grouped_row_major_scales():
    check_k_grouped([128, 256], 64, 48, "cpu", mn_major=False)
