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


@pytest.mark.parametrize("c_mode", ["c", "d"])
def test_normal_accumulates_onto_c(c_mode):
    import torch

    check_normal(129, 200, 384, torch.float32, "cpu", c_mode=c_mode)


@pytest.mark.parametrize("ks", [[128], [128, 0, 384, 256], [0, 0], [256] * 3])
@pytest.mark.parametrize("in_place", [False, True])
def test_k_grouped(ks, in_place):
    check_k_grouped(ks, 72, 136, "cpu", in_place=in_place)


def test_k_grouped_row_major_scales():
    check_k_grouped([128, 256], 64, 48, "cpu", mn_major=False)
