// Quantization to INT8 with FP32 scales: one per row (per token of an activation, per output channel of a
// weight), per 1 x G block of a row (per token group) or per 128 x 128 block; the operands of the INT8 GEMMs
// (fgemm/gemm_int8.hpp).
//
// Tensors on the CPU run the CPU backend; tensors on a CUDA device run JIT-compiled kernels on `stream`
// (an sm_90 GPU, as for the GEMMs). Both give the same bits. Every argument is validated and a violation
// throws fgemm::Error naming the argument, what was expected and what was given.
//
// Arithmetic. For each block of x (a row, 1 x G or 128 x 128; the blocks at the right and bottom edges are
// partial where K or N is not a multiple of the block's side), in FP32, every multiplication and reciprocal
// rounded once to nearest even (BF16 and FP16 inputs convert to FP32 exactly):
//
//   amax  = max(max over the block of |x|, 1e-10)     (1e-10 in FP32; the maximum over no columns is 0)
//   scale = amax * fl(1/127)                          (fl(1/127): the FP32 nearest 1/127)
//   q     = rne(x * (127 * (1 / amax)))               (as int8)
//
// rne() rounds to the nearest integer, ties to even. As |x| <= amax, |x * (127 * (1 / amax))| is at most
// 127 (1 + 2^-24)^3, which rounds to 127: every code lies in [-127, 127], symmetric, and -128 never occurs (a
// clamp to [-127, 127] would change nothing). These are the FP8 quantizers' operations (fgemm/quantize.hpp)
// with 127 for 448 and 1e-10 for 1e-4; in PyTorch, on CPU and CUDA tensors alike, for a float32 x:
//
//   amax = x.abs().amax(<the block's dimensions>).clamp(min=1e-10)
//   scale = amax * (1 / 127);  q = torch.round(x * (amax.reciprocal() * 127)), a NaN made 0, .to(torch.int8)
//
// Special values: a NaN in a block makes its scale NaN and every code of the block 0. Otherwise an infinity
// makes the scale +inf and every code of the block 0 (the inverse is 0; inf * 0 is NaN, which converts to 0).
// Either way the block dequantizes to NaN (0 * NaN, 0 * inf), so a GEMM fed with it returns NaN where the
// block contributes. An all-zero block (-0 included) gets the scale fl(1e-10) * fl(1/127) and codes 0.
#pragma once

#include <cstdint>

#include "fgemm/fgemm.hpp"

namespace fgemm {

// x [M, K] or [G, M, K], bfloat16, float16 or float32 -> x_int8 int8 of the shape of x, and sf float32 [M]
// (or [G, M]): one scale per token (row). x and x_int8 are contiguous in their last dimension; sf may have any
// strides. The outputs overlap neither x nor each other. K may be 0: each row's scale is then the floor's.
void per_token_cast_to_int8(const TensorView& x, const TensorView& x_int8, const TensorView& sf,
                            Stream stream = nullptr);

// w [N, K] or [G, N, K] -> w_int8 of the shape of w, and sf float32 [N] (or [G, N]): one scale per output
// channel (row), the arithmetic and rules of per_token_cast_to_int8.
void per_channel_cast_to_int8(const TensorView& w, const TensorView& w_int8, const TensorView& sf,
                              Stream stream = nullptr);

// x [M, K] or [G, M, K] -> x_int8 of the shape of x, and sf float32 [M, ceil(K/group_size)] (or
// [G, M, ceil(K/group_size)]), any strides (e.g. the MN-major, TMA-aligned layout): one scale per token and
// group_size columns, group_size 32, 64 or 128 (128: the activations of the INT8 GEMM's block recipe).
void per_token_group_cast_to_int8(const TensorView& x, const TensorView& x_int8, const TensorView& sf,
                                  std::int64_t group_size = 128, Stream stream = nullptr);

// w [N, K] or [G, N, K] -> w_int8 of the shape of w, and sf float32 [ceil(N/128), ceil(K/128)] (or
// [G, ceil(N/128), ceil(K/128)]), any strides: one scale per 128 x 128 block.
void per_block_cast_to_int8(const TensorView& w, const TensorView& w_int8, const TensorView& sf,
                            Stream stream = nullptr);

}  // namespace fgemm
