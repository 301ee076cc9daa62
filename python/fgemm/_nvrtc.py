"""Where NVIDIA's pip wheels put libnvrtc, so that the JIT finds NVRTC without a CUDA toolkit installed."""

import importlib.util
import pathlib

from . import _C


def nvrtc_wheel_dirs(nvidia_dirs=None):
    """The lib folders holding libnvrtc under the `nvidia` namespace package (nvidia/cu13/lib from
    nvidia-cuda-nvrtc for CUDA 13, nvidia/cuda_nvrtc/lib for CUDA 12), in name order. nvidia_dirs defaults to
    the installed package's folders."""
    if nvidia_dirs is None:
        spec = importlib.util.find_spec("nvidia")
        nvidia_dirs = list(spec.submodule_search_locations) if spec and spec.submodule_search_locations else []
    found = []
    for nvidia_dir in map(pathlib.Path, nvidia_dirs):
        for lib in sorted(nvidia_dir.glob("*/lib")):
            if any(lib.glob("libnvrtc.so*")):
                found.append(str(lib))
    return found


def add_nvrtc_wheel_dirs():
    """Tells the JIT to look for libnvrtc in each of nvrtc_wheel_dirs()."""
    for directory in nvrtc_wheel_dirs():
        _C.add_nvrtc_search_dir(directory)
