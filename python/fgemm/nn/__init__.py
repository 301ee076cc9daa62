"""FP8 training layers with autograd: fgemm.nn.Linear and fgemm.nn.GroupedLinear (a mixture of experts' linear
layer), whose forward and gradient GEMMs run in FP8 with DeepSeek-V3's fine-grained scaling, on CUDA or CPU
tensors (docs/ARCHITECTURE.md, "Training layers")."""

from .grouped_linear import GroupedLinear
from .linear import Linear

__all__ = ["Linear", "GroupedLinear"]
