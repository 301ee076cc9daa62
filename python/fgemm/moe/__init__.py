"""Expert parallelism: a mixture-of-experts layer whose experts are sharded over the ranks of a
torch.distributed process group (NCCL on GPUs, gloo on CPU tensors), computed with fgemm's m-grouped FP8 GEMMs.

ExpertParallelMoE is the layer; ReferenceMoE computes the same layer in one process, expert by expert, for
tests. docs/EXPERT_PARALLEL.md describes how the layer works and how it scales.
"""

from .environment import MULTICAST_OFF, disable_multicast
from .layer import ExpertParallelMoE
from .reference import ReferenceMoE

__all__ = ["ExpertParallelMoE", "ReferenceMoE", "MULTICAST_OFF", "disable_multicast"]
