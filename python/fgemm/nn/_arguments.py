"""Checks of the layers' arguments, each error naming the layer, the argument and what was expected."""

from typing import Optional

import torch

# Every feature count is the K of one of the step's FP8 GEMMs (in_features in the forward, out_features in the
# input gradient) and the row length of an output: K must keep the FP8 rows' stride a multiple of 16 bytes.
FEATURE_MULTIPLE = 16
# The parameters' (and so the activations') dtypes: BF16 master weights, or FP32 ones.
PARAMETER_DTYPES = (torch.bfloat16, torch.float32)


def _fail(error, layer: str, name: str, what: str):
    raise error(f"fgemm.nn.{layer}: argument '{name}' {what}")


def positive_int(value, layer: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(TypeError, layer, name, f"expected an int, got {type(value).__name__}")
    if value < 1:
        _fail(ValueError, layer, name, f"must be positive, got {value}")
    return value


def feature_count(value, layer: str, name: str) -> int:
    positive_int(value, layer, name)
    if value % FEATURE_MULTIPLE != 0:
        _fail(ValueError, layer, name, f"must be a multiple of {FEATURE_MULTIPLE} (the K of an FP8 GEMM of the "
                                       f"layer), got {value}")
    return value


def parameter_dtype(value, layer: str) -> torch.dtype:
    if value not in PARAMETER_DTYPES:
        _fail(TypeError, layer, "dtype", f"must be torch.bfloat16 or torch.float32, got {value}")
    return value


def flag(value, layer: str, name: str) -> bool:
    if not isinstance(value, bool):
        _fail(TypeError, layer, name, f"expected a bool, got {type(value).__name__}")
    return value


def layer_input(x, weight: torch.Tensor, in_features: int, layer: str, dims: Optional[int] = None) -> torch.Tensor:
    """x checked against the layer (its features last; exactly `dims` dimensions where given, else at least one)
    and converted to the parameters' dtype, differentiably, so that its gradient comes back in x's own dtype."""
    if not isinstance(x, torch.Tensor):
        _fail(TypeError, layer, "x", f"expected a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        _fail(TypeError, layer, "x", f"expected a floating-point tensor, got {x.dtype}")
    if x.dim() == 0 or x.size(-1) != in_features or dims not in (None, x.dim()):
        shape = "[..., in_features]" if dims is None else "[tokens, in_features]"
        _fail(ValueError, layer, "x", f"expected shape {shape} with in_features = {in_features}, "
                                      f"got {list(x.shape)}")
    if x.device != weight.device:
        _fail(ValueError, layer, "x", f"is on {x.device}, the layer's parameters on {weight.device}")
    return x.to(weight.dtype)


def int_list(value, layer: str, name: str) -> list:
    if not isinstance(value, (list, tuple)) or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
        _fail(TypeError, layer, name, f"expected a list of ints, got {value!r}")
    return list(value)


def token_splits(value, num_experts: int, tokens: int, layer: str) -> list:
    """m_splits: how many of the tokens (sorted by expert) each expert owns."""
    splits = int_list(value, layer, "m_splits")
    if len(splits) != num_experts or min(splits) < 0 or sum(splits) != tokens:
        _fail(ValueError, layer, "m_splits", f"expected {num_experts} counts (one per expert), each >= 0, summing to "
                                             f"the {tokens} tokens of x, got {splits}")
    return splits


def main_grad_for_step(weight: torch.Tensor, fuse_wgrad_accumulation: bool, layer: str) -> Optional[torch.Tensor]:
    """weight.main_grad, the FP32 buffer that the step's weight gradient is to be added to, where
    fuse_wgrad_accumulation is on and the weight gradient is wanted; else None."""
    if not (fuse_wgrad_accumulation and weight.requires_grad and torch.is_grad_enabled()):
        return None
    buffer = getattr(weight, "main_grad", None)
    if not isinstance(buffer, torch.Tensor):
        raise AttributeError(f"fgemm.nn.{layer}: fuse_wgrad_accumulation needs weight.main_grad, an FP32 tensor of "
                             f"the weight's shape {list(weight.shape)} (created by the caller, as Megatron does)")
    if buffer.dtype != torch.float32 or buffer.shape != weight.shape or buffer.device != weight.device:
        raise ValueError(f"fgemm.nn.{layer}: weight.main_grad must be float32 of shape {list(weight.shape)} on "
                         f"{weight.device}, got {buffer.dtype} of shape {list(buffer.shape)} on {buffer.device}")
    if not buffer.is_contiguous():
        raise ValueError(f"fgemm.nn.{layer}: weight.main_grad must be contiguous, got strides {buffer.stride()}")
    return buffer
