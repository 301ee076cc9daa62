"""fgemm.nn.GroupedLinear: a mixture of experts' linear layer, one weight per expert, its GEMMs grouped and in
FP8."""

from typing import List, Optional

import torch

from . import _arguments
from ._expert_rows import ExpertRows
from ._grouped_linear_function import GroupedLinearFunction
from ._init import reset_like_torch_linear
from ._weight_cache import WeightCache

_LAYER = "GroupedLinear"


class GroupedLinear(torch.nn.Module):
    """y[t] = x[t] W[g]^T + b[g] for the tokens t of each expert g, with the forward GEMM and both gradient
    GEMMs grouped over the experts and in FP8 (DeepSeek-V3's recipe, as fgemm.nn.Linear).

    num_experts >= 1; in_features, out_features: multiples of 16. The weight [num_experts, out, in] and the bias
    [num_experts, out] are master parameters in `dtype` (torch.bfloat16, or torch.float32), each expert's
    initialised as torch.nn.Linear's. forward(x, m_splits): x [T, in_features], any floating-point dtype
    (converted to `dtype`), its tokens sorted by expert; m_splits a list of num_experts ints, the tokens of each
    expert (0 allowed), summing to T. Returns y [T, out_features] in `dtype`.

    fuse_wgrad_accumulation: the weight gradient is added in FP32 to weight.main_grad (float32
    [num_experts, out, in], created by the caller) by the weight gradient's GEMM, and the weight's .grad is left
    as it was (autograd is given None), as in fgemm.nn.Linear.

    is_first_microbatch (forward): the weight quantized once per optimizer step, as in fgemm.nn.Linear."""

    def __init__(self, num_experts: int, in_features: int, out_features: int, bias: bool = False, device=None,
                 dtype: torch.dtype = torch.bfloat16, fuse_wgrad_accumulation: bool = False):
        super().__init__()
        self.num_experts = _arguments.positive_int(num_experts, _LAYER, "num_experts")
        self.in_features = _arguments.feature_count(in_features, _LAYER, "in_features")
        self.out_features = _arguments.feature_count(out_features, _LAYER, "out_features")
        dtype = _arguments.parameter_dtype(dtype, _LAYER)
        self.fuse_wgrad_accumulation = _arguments.flag(fuse_wgrad_accumulation, _LAYER, "fuse_wgrad_accumulation")
        self.weight = torch.nn.Parameter(torch.empty(num_experts, out_features, in_features, device=device,
                                                     dtype=dtype))
        if _arguments.flag(bias, _LAYER, "bias"):
            self.bias = torch.nn.Parameter(torch.empty(num_experts, out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self._weight_cache = WeightCache()
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for expert in range(self.num_experts):
            reset_like_torch_linear(self.weight[expert], None if self.bias is None else self.bias[expert])

    def forward(self, x: torch.Tensor, m_splits: List[int], is_first_microbatch: Optional[bool] = None
                ) -> torch.Tensor:
        x = _arguments.layer_input(x, self.weight, self.in_features, _LAYER, dims=2)
        layout = ExpertRows(_arguments.token_splits(m_splits, self.num_experts, x.size(0), _LAYER), x.device)
        main_grad = _arguments.main_grad_for_step(self.weight, self.fuse_wgrad_accumulation, _LAYER)
        quantized = self._weight_cache.quantized(self.weight, is_first_microbatch, _LAYER)
        return GroupedLinearFunction.apply(x, self.weight, self.bias, layout, main_grad, quantized)

    def extra_repr(self) -> str:
        return (f"num_experts={self.num_experts}, in_features={self.in_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}, "
                f"fuse_wgrad_accumulation={self.fuse_wgrad_accumulation}")
