"""fgemm.is_supported: whether the GPU kernels can run on a device."""

import pytest
import torch

import fgemm


def test_cpu_devices_are_not_supported():
    assert fgemm.is_supported("cpu") is False
    assert fgemm.is_supported(torch.device("cpu")) is False


def test_without_a_cuda_device_nothing_is_supported(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert fgemm.is_supported() is False and fgemm.is_supported("cuda:0") is False and fgemm.is_supported(0) is False


@pytest.mark.parametrize("device,error", [(1.5, TypeError), (True, TypeError), ("gpu7", ValueError)])
def test_bad_device(device, error):
    with pytest.raises(error, match="argument 'device'"):
        fgemm.is_supported(device)


def test_no_gemm_for_an_unsupported_device(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="no GEMM for device 'cuda'"):
        fgemm.auto_precision("cuda")


@pytest.mark.gpu
def test_a_cuda_device_is_supported_where_it_is_hopper():
    hopper = torch.cuda.get_device_capability() == (9, 0)
    assert fgemm.is_supported() is hopper and fgemm.is_supported("cuda") is hopper
    assert fgemm.is_supported(torch.cuda.device_count()) is False  # an index past the last device
