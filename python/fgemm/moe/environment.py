"""NVLink multicast off, for the processes that run the layer: NCCL's NVLS algorithms, torch's symmetric memory
and NVSHMEM (which torch may load for it) would otherwise use it where the GPUs offer it. The layer itself calls
nothing that does."""

import os

MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def disable_multicast() -> None:
    """Sets MULTICAST_OFF in this process's environment (inherited by the processes it starts); call it before
    the process group's first NCCL communicator is made."""
    os.environ.update(MULTICAST_OFF)
