"""The parameters' initialisation, torch.nn.Linear's."""

import math
from typing import Optional

import torch


def reset_like_torch_linear(weight: torch.Tensor, bias: Optional[torch.Tensor]) -> None:
    """Draws weight [out, in] and bias [out] as torch.nn.Linear.reset_parameters does, in the same order from the
    same generator: both uniform in [-1/sqrt(in), 1/sqrt(in)] (the weight through kaiming_uniform_ with
    a = sqrt(5), which gives that bound)."""
    torch.nn.init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        bound = 1 / math.sqrt(weight.size(1))
        torch.nn.init.uniform_(bias, -bound, bound)
