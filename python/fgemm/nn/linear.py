"""fgemm.nn.Linear: torch.nn.Linear with its three GEMMs in FP8."""

from typing import Optional

import torch

from . import _arguments
from ._init import reset_like_torch_linear
from ._linear_function import LinearFunction
from ._weight_cache import WeightCache

_LAYER = "Linear"


class Linear(torch.nn.Module):
    """y = x W^T + b, as torch.nn.Linear, with the forward GEMM and both gradient GEMMs in FP8 (DeepSeek-V3's
    recipe: activations and gradients per 1x128 block, the weight per 128x128 block, FP32 sums promoted once
    per 128-wide K block).

    in_features, out_features: multiples of 16 (each is the K of one of the FP8 GEMMs). The weight [out, in] and
    the bias [out] are master parameters in `dtype` (torch.bfloat16, or torch.float32), initialised as
    torch.nn.Linear's. x [..., in_features] of any floating-point dtype is converted to `dtype` (its gradient
    comes back in its own dtype); y [..., out_features] is in `dtype`. CUDA tensors run on the GPU, CPU tensors
    on the CPU backend.

    fuse_wgrad_accumulation: as Megatron-LM's and TransformerEngine's option, the weight gradient is added in
    FP32 to weight.main_grad (a float32 tensor of the weight's shape, which the caller creates, as Megatron's
    distributed optimizer does) by the weight gradient's GEMM itself, and the weight's .grad is left as it was
    (autograd is given None).

    is_first_microbatch (forward), as TransformerEngine's: None quantizes the weight on every call. With gradient
    accumulation, True on the first micro-batch of an optimizer step quantizes it and keeps the codes (both
    orientations, 2 bytes per weight), and False on the micro-batches after reuses them; False raises an error
    where the weight was updated in place since (an optimizer step). A write through weight.data is not seen:
    pass True after one."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype: torch.dtype = torch.bfloat16, fuse_wgrad_accumulation: bool = False):
        super().__init__()
        self.in_features = _arguments.feature_count(in_features, _LAYER, "in_features")
        self.out_features = _arguments.feature_count(out_features, _LAYER, "out_features")
        dtype = _arguments.parameter_dtype(dtype, _LAYER)
        self.fuse_wgrad_accumulation = _arguments.flag(fuse_wgrad_accumulation, _LAYER, "fuse_wgrad_accumulation")
        self.weight = torch.nn.Parameter(torch.empty(out_features, in_features, device=device, dtype=dtype))
        if _arguments.flag(bias, _LAYER, "bias"):
            self.bias = torch.nn.Parameter(torch.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self._weight_cache = WeightCache()
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_like_torch_linear(self.weight, self.bias)

    def forward(self, x: torch.Tensor, is_first_microbatch: Optional[bool] = None) -> torch.Tensor:
        x = _arguments.layer_input(x, self.weight, self.in_features, _LAYER)
        main_grad = _arguments.main_grad_for_step(self.weight, self.fuse_wgrad_accumulation, _LAYER)
        quantized = self._weight_cache.quantized(self.weight, is_first_microbatch, _LAYER)
        y = LinearFunction.apply(x.reshape(-1, self.in_features), self.weight, self.bias, main_grad, quantized)
        return y.view(*x.shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                f"fuse_wgrad_accumulation={self.fuse_wgrad_accumulation}")
