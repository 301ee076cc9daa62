"""Whether fgemm's GPU kernels can run on a device."""

import torch

# The kernels are compiled for sm_90a, which runs on compute capability 9.0 only (H100, H200, H20, GH200).
HOPPER_CAPABILITY = (9, 0)


def _as_device(device) -> torch.device:
    if device is None:
        return torch.device("cuda")
    if isinstance(device, torch.device):
        return device
    if isinstance(device, bool) or not isinstance(device, (str, int)):
        raise TypeError(f"fgemm.is_supported: argument 'device' expected a torch.device, a str, an int or None, "
                        f"got {type(device).__name__}")
    try:
        return torch.device(device)
    except RuntimeError as error:
        raise ValueError(f"fgemm.is_supported: argument 'device' is not a device: {error}") from None


def is_supported(device=None) -> bool:
    """Whether fgemm's GPU kernels can run on `device`: a CUDA device of compute capability 9.0 (Hopper), which
    torch can use (so with a working NVIDIA driver).

    device: a torch.device, a string such as "cuda:1", a CUDA device index, or None for the current CUDA
    device. False for a CPU device, on a machine without a usable CUDA device, and for other GPUs. The CPU
    backend needs no such check: it runs on any x86-64 CPU. The kernels are compiled at their first use, with
    NVRTC (from the CUDA toolkit or the nvidia-cuda-nvrtc wheel), which this does not load.
    """
    device = _as_device(device)
    if device.type != "cuda" or not torch.cuda.is_available():
        return False
    index = torch.cuda.current_device() if device.index is None else device.index
    if index >= torch.cuda.device_count():
        return False
    return torch.cuda.get_device_capability(index) == HOPPER_CAPABILITY
