"""A linear layer's step in FP8: the forward GEMM and the two gradient GEMMs, with DeepSeek-V3's scaling
(docs/ARCHITECTURE.md, "Training layers")."""

from typing import Optional

import torch

from ..gemm import fp8_gemm_nt
from ..quantize import cast_transpose_to_fp8
from ._weight_cache import QuantizedWeight, weight_for_step
from ._tokens import pad_tokens

# The weight gradient's recipe: both operands (the output gradient and the input, transposed) per 1x128 block.
RECIPE_1D1D = (1, 1, 128)


class LinearFunction(torch.autograd.Function):
    """y = x W^T + b for x [T, in], W [out, in], b [out] (or None), all of one dtype; y in that dtype.

    main_grad: None, and W's gradient is returned; or weight.main_grad (FP32 [out, in]), to which the gradient
    is added in place, and None is returned as W's gradient. quantized_weight: None, and W is quantized here; or
    per_block_cast_transpose_to_fp8(W), kept from an earlier micro-batch (WeightCache)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
                main_grad: Optional[torch.Tensor], quantized_weight: Optional[QuantizedWeight]) -> torch.Tensor:
        tokens = x.size(0)
        # The tokens are padded for the transposed copy, which the weight gradient reads with the tokens as K;
        # the forward GEMM reads the rows of the real tokens only.
        x_fp8, x_scales, xt_fp8, xt_scales = cast_transpose_to_fp8(pad_tokens(x))
        w_fp8, w_scales, wt_fp8, wt_scales = weight_for_step(weight, quantized_weight, ctx.needs_input_grad[0])
        y = torch.empty(tokens, weight.size(0), dtype=x.dtype, device=x.device)
        fp8_gemm_nt((x_fp8[:tokens], x_scales[:tokens]), (w_fp8, w_scales), y)
        if bias is not None:
            y += bias
        ctx.save_for_backward(xt_fp8, xt_scales, wt_fp8, wt_scales)
        ctx.weight_shape = weight.shape
        ctx.main_grad = main_grad
        return y

    @staticmethod
    def backward(ctx, dy: torch.Tensor):
        xt_fp8, xt_scales, wt_fp8, wt_scales = ctx.saved_tensors
        x_needs_grad, weight_needs_grad, bias_needs_grad, _, _ = ctx.needs_input_grad
        tokens = dy.size(0)
        dy_fp8, dy_scales, dyt_fp8, dyt_scales = cast_transpose_to_fp8(pad_tokens(dy))
        dx = dw = db = None
        if x_needs_grad:
            # dx = dy W, B = W^T [in, out].
            dx = torch.empty(tokens, wt_fp8.size(0), dtype=dy.dtype, device=dy.device)
            fp8_gemm_nt((dy_fp8[:tokens], dy_scales[:tokens]), (wt_fp8, wt_scales), dx)
        if weight_needs_grad:
            # dW = dy^T x over the padded tokens: A = dy^T [out, T], B = x^T [in, T], both per 1x128 block.
            operands = ((dyt_fp8, dyt_scales), (xt_fp8, xt_scales))
            if ctx.main_grad is not None:
                fp8_gemm_nt(*operands, ctx.main_grad, c=ctx.main_grad, recipe=RECIPE_1D1D)
            else:
                # D in the weight's own type (BF16 or FP32): the GEMM rounds its FP32 sums once, as a conversion
                # afterwards would, and no FP32 copy of the gradient is written and read again.
                dw = torch.empty(ctx.weight_shape, dtype=dy.dtype, device=dy.device)
                fp8_gemm_nt(*operands, dw, recipe=RECIPE_1D1D)
        if bias_needs_grad:
            db = dy.sum(0, dtype=torch.float32).to(dy.dtype)
        return dx, dw, db, None, None
