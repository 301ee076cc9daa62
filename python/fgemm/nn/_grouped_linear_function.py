"""A mixture of experts' linear layer's step in FP8: the m-grouped GEMMs of the forward and the input gradient
and the k-grouped GEMM of the weight gradient (docs/ARCHITECTURE.md, "Training layers")."""

from typing import Optional

import torch

from ..gemm import k_grouped_fp8_gemm_nt_contiguous, m_grouped_fp8_gemm_nt_contiguous
from ..quantize import grouped_cast_transpose_to_fp8
from ._expert_rows import ExpertRows
from ._weight_cache import QuantizedWeight, weight_for_step


def _grouped_gemm(a, b, layout: ExpertRows, dtype: torch.dtype) -> torch.Tensor:
    """Each expert's rows of A (the padded layout) times its B[g]^T, in `dtype`, written in the tokens' order
    without the padding: [T, N]."""
    d = torch.empty(layout.tokens, b[0].size(1), dtype=dtype, device=a[0].device)
    m_grouped_fp8_gemm_nt_contiguous(a, b, d, layout.psum, use_psum_layout=True, d_row_starts=layout.token_starts)
    return d


class GroupedLinearFunction(torch.autograd.Function):
    """y[t] = x[t] W[g]^T + b[g] for each token t of expert g: x [T, in] sorted by expert as `layout` says,
    W [G, out, in], b [G, out] (or None), all of one dtype; y [T, out] in that dtype.

    main_grad: None, and W's gradient is returned; or weight.main_grad (FP32 [G, out, in]), to which the
    gradient is added in place, and None is returned as W's gradient. quantized_weight: None, and W is quantized
    here; or per_block_cast_transpose_to_fp8(W), kept from an earlier micro-batch (WeightCache)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor], layout: ExpertRows,
                main_grad: Optional[torch.Tensor], quantized_weight: Optional[QuantizedWeight]) -> torch.Tensor:
        # x's tokens quantized into the padded layout, both ways, the padding rows zeros: the weight gradient's K
        # runs over them, and zeros add nothing.
        x_fp8, x_scales, xt_flat, xt_scales = grouped_cast_transpose_to_fp8(x, layout.counts)
        # The input gradient reads each W[g] transposed: the stack of weights quantized both ways in one launch.
        w_fp8, w_scales, wt_fp8, wt_scales = weight_for_step(weight, quantized_weight, ctx.needs_input_grad[0])
        y = _grouped_gemm((x_fp8, x_scales), (w_fp8, w_scales), layout, x.dtype)
        if bias is not None:
            y += bias.index_select(0, layout.experts)
        ctx.save_for_backward(xt_flat, xt_scales, wt_fp8, wt_scales)
        ctx.weight_shape = weight.shape
        ctx.layout = layout
        ctx.main_grad = main_grad
        return y

    @staticmethod
    def backward(ctx, dy: torch.Tensor):
        xt_flat, xt_scales, wt_fp8, wt_scales = ctx.saved_tensors
        x_needs_grad, weight_needs_grad, bias_needs_grad, _, _, _ = ctx.needs_input_grad
        layout = ctx.layout
        dy_fp8, dy_scales, dyt_flat, dyt_scales = grouped_cast_transpose_to_fp8(dy, layout.counts)
        dx = dw = db = None
        if x_needs_grad:
            # dx = dy W[g] per expert, B[g] = W[g]^T [in, out].
            dx = _grouped_gemm((dy_fp8, dy_scales), (wt_fp8, wt_scales), layout, dy.dtype)
        if weight_needs_grad:
            # dW[g] = dy_g^T x_g, K = expert g's padded tokens: A_g = dy_g^T [out, ks[g]], B_g = x_g^T [in, ks[g]].
            # Added in FP32 to main_grad; or written in BF16 by the GEMM, which rounds its FP32 sums once, as a
            # conversion afterwards would (an FP32 gradient: accumulated onto zeros).
            if ctx.main_grad is not None:
                d, c = ctx.main_grad, ctx.main_grad
            elif dy.dtype == torch.bfloat16:
                d, c = dy.new_empty(ctx.weight_shape), None
            else:
                d = c = dy.new_zeros(ctx.weight_shape, dtype=torch.float32)
            k_grouped_fp8_gemm_nt_contiguous((dyt_flat, dyt_scales), (xt_flat, xt_scales), d, layout.padded_counts,
                                             layout.padded_counts_tensor, c=c)
            dw = None if ctx.main_grad is not None else d
        if bias_needs_grad:
            db = dy.new_zeros((ctx.weight_shape[0], dy.size(1)), dtype=torch.float32)
            db = db.index_add_(0, layout.experts, dy.float()).to(dy.dtype)
        return dx, dw, db, None, None, None
