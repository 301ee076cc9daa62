// Quantization to FP8 E4M3 with DeepSeek-V3's fine-grained scales, and the layouts of scales.
//
// Tensors on the CPU run the CPU backend; tensors on a CUDA device run JIT-compiled kernels on `stream`
// (an sm_90 GPU, as for the GEMMs). Both give the same bits. Every argument is validated and a violation
// throws fgemm::Error naming the argument, what was expected and what was given.
//
// Arithmetic. For each block of x (1 x 128 for per_token_cast_to_fp8, 128 x 128 for per_block_cast_to_fp8;
// the blocks at the right and bottom edges are partial where K or N is not a multiple of 128), in FP32,
// every multiplication and reciprocal rounded once to nearest even:
//
//   amax  = max(max over the block of |x|, 1e-4)
//   scale = amax * fl(1/448)                    (fl(1/448): the FP32 nearest 1/448)
//   q     = e4m3(x * (448 * (1 / amax)))
//
// and with use_ue8m0 the scale is a power of two (UE8M0, an exponent alone), rounded up exactly:
//
//   scale = 2^ceil(log2(amax * fl(1/448)))      q = e4m3(x * (1 / scale))   (which is x / scale exactly)
//
// e4m3() rounds to nearest even and would saturate to +-448, but never has to: scaled finite inputs stay
// below 464, the least magnitude that rounds beyond 448. These are the operations PyTorch performs for
// DeepGEMM's reference `x * (448.0 / amax)` with `amax / 448.0` on CUDA tensors, so that reference gives the
// same bits. With use_ue8m0, DeepGEMM's reference `2 ** ceil(log2(s))` in FP32 differs where log2 rounds a
// scale just above a power of two down to that power; fgemm takes the exact exponent.
//
// Special values: a NaN in a block makes its scale NaN and every code of the block NaN. Otherwise an
// infinity makes the scale +inf, the codes of the infinite elements NaN and those of the finite ones +-0
// (x * 0), so a GEMM fed with them returns NaN where that block contributes. The sign of a NaN is not
// specified (E4M3 NaN is 0x7F or 0xFF).
#pragma once

#include <cstdint>
#include <vector>

#include "fgemm/fgemm.hpp"

namespace fgemm {

// x [M, K] or [G, M, K], bfloat16 or float32 -> x_fp8 E4M3 of the shape of x, and sf float32
// [M, ceil(K/128)] (or [G, M, ceil(K/128)]): one scale per token and 128 columns. x and x_fp8 are contiguous
// in their last dimension; sf may have any strides, e.g. those of the MN-major, TMA-aligned layout DeepGEMM
// asks for (strides (1, M rounded up to a multiple of 4)). The outputs overlap neither x nor each other.
void per_token_cast_to_fp8(const TensorView& x, const TensorView& x_fp8, const TensorView& sf, bool use_ue8m0 = false,
                           Stream stream = nullptr);

// w [N, K] or [G, N, K] -> w_fp8 of the shape of w, and sf float32 [ceil(N/128), ceil(K/128)] (or
// [G, ceil(N/128), ceil(K/128)]): one scale per 128 x 128 block. The same rules as per_token_cast_to_fp8.
void per_block_cast_to_fp8(const TensorView& w, const TensorView& w_fp8, const TensorView& sf, bool use_ue8m0 = false,
                           Stream stream = nullptr);

// FP8 training's cast-transpose: x [M, K], bfloat16 or float32, read once and quantized twice with 1 x 128 blocks:
//   x_fp8 E4M3 [M, K] and sf float32 [M, ceil(K/128)]: the bits of per_token_cast_to_fp8(x);
//   xt_fp8 E4M3 [K, M] and sft float32 [K, ceil(M/128)]: the bits of per_token_cast_to_fp8 of x's transpose, so
//   that element (k, mb) of sft scales xt_fp8[k, 128 mb : 128 mb + 128], x's 128 x 1 block of rows 128 mb ..
//   128 mb + 127 in column k.
// x, x_fp8 and xt_fp8 are contiguous in their last dimension; sf and sft may have any strides, e.g. the MN-major,
// TMA-aligned layout (strides (1, M rounded up to a multiple of 4) for sf, (1, K rounded up) for sft). Any M >= 0
// and K >= 0; the blocks at the edges are partial. The outputs overlap neither x nor each other.
void cast_transpose_to_fp8(const TensorView& x, const TensorView& x_fp8, const TensorView& sf,
                           const TensorView& xt_fp8, const TensorView& sft, bool use_ue8m0 = false,
                           Stream stream = nullptr);

// The cast-transpose of a weight for FP8 training, whose input gradient reads the weight transposed: x [N, K],
// bfloat16 or float32, read once and quantized per 128 x 128 block:
//   x_fp8 E4M3 [N, K] and sf float32 [ceil(N/128), ceil(K/128)]: the bits of per_block_cast_to_fp8(x);
//   xt_fp8 E4M3 [K, N] and sft float32 [ceil(K/128), ceil(N/128)]: the bits of per_block_cast_to_fp8 of x's
//   transpose, which are x_fp8 and sf transposed (a 128 x 128 block of x is one of its transpose).
// Or the experts' weights of a grouped layer, x [G, N, K]: each matrix as above, every output with a leading G
// (xt_fp8 [G, K, N], sft [G, ceil(K/128), ceil(N/128)]), in one launch.
// The rules of cast_transpose_to_fp8 otherwise.
void per_block_cast_transpose_to_fp8(const TensorView& x, const TensorView& x_fp8, const TensorView& sf,
                                     const TensorView& xt_fp8, const TensorView& sft, bool use_ue8m0 = false,
                                     Stream stream = nullptr);

// The cast-transpose of the experts' activations for their weight gradient (the operands of a K-grouped GEMM,
// whose K is each expert's tokens): x [sum(ks), H], expert g owning the ks[g] rows (any count, possibly 0) after
// those of the experts before it. The outputs hold each expert's rows padded with zero rows to p_g, ks[g] rounded
// up to a multiple of 128 (the aligned layout of the grouped GEMMs), from row s_g = p_0 + ... + p_(g-1), P rows in
// all: they are those of x so padded (x itself where every ks[g] is a multiple of 128). Writes
//   x_fp8 [P, H] and sf [P, ceil(H/128)]: as cast_transpose_to_fp8;
//   xt_fp8 E4M3 flat [P * H]: expert g's transposed codes, a row-major [H, p_g] block starting at element s_g * H,
//   each row quantized per 1 x 128 block (the codes of per_token_cast_to_fp8 of the expert's padded x^T);
//   sft float32 [H, P/128]: the scales of cast_transpose_to_fp8's sft (expert boundaries fall on its blocks),
//   expert g's in columns s_g / 128 .. (s_g + p_g) / 128 - 1.
// The rules of cast_transpose_to_fp8 otherwise; xt_fp8 is contiguous.
void grouped_cast_transpose_to_fp8(const TensorView& x, const std::vector<std::int64_t>& ks, const TensorView& x_fp8,
                                   const TensorView& sf, const TensorView& xt_fp8, const TensorView& sft,
                                   bool use_ue8m0 = false, Stream stream = nullptr);

// Copies float32 scales sf [M, KB] (or [G, M, KB]) into `out` of the same shape and any layout, e.g. from
// row-major into the MN-major, TMA-aligned layout. sf may have any non-negative strides; out's elements
// are distinct and overlap no element of sf.
void copy_scales(const TensorView& sf, const TensorView& out, Stream stream = nullptr);

}  // namespace fgemm
