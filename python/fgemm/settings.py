"""The GPU kernels' settings."""

from . import _C


def set_num_sms(num_sms: int) -> None:
    """Limits the GPU kernels to num_sms streaming multiprocessors (0: all of the device's)."""
    _C.set_num_sms(num_sms)


def set_pdl(enable: bool) -> None:
    """Programmatic dependent launch of the GEMM and quantization kernels (off by default, as in DeepGEMM): each
    may start while the previous kernel of its stream is still running, so that its prologue overlaps that
    kernel's last tiles; it touches no global memory before that kernel has completed, and the results are the
    same bits. Applies to kernels launched afterwards, eagerly or captured in a CUDA graph."""
    _C.set_pdl(enable)


def get_pdl() -> bool:
    """Whether set_pdl(True) is in effect."""
    return _C.get_pdl()


def get_num_sms() -> int:
    """The SMs the GPU kernels use: the value of set_num_sms, else the current device's count (0 without a
    usable GPU)."""
    return _C.get_num_sms()
