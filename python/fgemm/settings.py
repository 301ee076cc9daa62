"""The GPU kernels' settings."""

from . import _C


def set_num_sms(num_sms: int) -> None:
    """Limits the GPU kernels to num_sms streaming multiprocessors (0: all of the device's)."""
    _C.set_num_sms(num_sms)


def get_num_sms() -> int:
    """The SMs the GPU kernels use: the value of set_num_sms, else the current device's count (0 without a
    usable GPU)."""
    return _C.get_num_sms()
