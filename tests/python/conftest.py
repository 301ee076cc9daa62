"""Registers the `gpu` marker; gpu-marked tests are skipped where torch sees no CUDA device."""

import pytest
import torch


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped where torch.cuda.is_available() is false)")


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device; torch.cuda.is_available() is false")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
