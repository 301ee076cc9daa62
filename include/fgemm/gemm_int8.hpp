// INT8 GEMMs: D = C + bias + the scaled sums of A · Bᵀ, with A int8 [M, K] and B int8 [N, K] ("NT", K
// contiguous). Every product of two int8 values is summed exactly in INT32; the shapes of the scales name the
// recipe (docs/ARCHITECTURE.md, Semantics):
//
//   recipe                    sa                      sb                          D
//   per token / per channel   [M], [M, 1] or 0-d      [N], [1, N] or 0-d          sa[m] * sb[n] * sum
//   DeepSeek's blocks         [M, ceil(K/128)]        [ceil(N/128), ceil(K/128)]  sum over K blocks kb of
//                                                                                 sa[m, kb] * sb[n/128, kb] *
//                                                                                 (the INT32 sum of block kb)
// // A 0-d scale is one scale for the whole tensor. Scales are FP32; D is BF16, FP16 or FP32; C (optional) is FP32 or
// D's 16-bit type, of D's shape; bias (optional) is [N], FP32 or D's type. Without scales, D is int32 and holds the
// exact INT32 sums, as torch._int_mm gives them (wrapping modulo 2^32 where a sum leaves the int32 range; with int8
// values a sum stays in range while K <= 131072).
//
// Tensors on the CPU run the CPU backend, tensors on a CUDA device the sm90 kernels on `stream`. Every argument
// is validated and a violation throws fgemm::Error naming the argument, what was expected and what was given.
#pragma once

#include <cstdint>
#include <optional>

#include "fgemm/fgemm.hpp"

namespace fgemm {

// Scaled: a [M, K], b [N, K], d [M, N] BF16, FP16 or FP32, scales as the table above says.
void int8_gemm_nt(const TensorView& a, const TensorView& sa, const TensorView& b, const TensorView& sb,
                  const TensorView& d, const std::optional<TensorView>& c = std::nullopt,
                  const std::optional<TensorView>& bias = std::nullopt, Stream stream = nullptr);

// Exact: d int32 [M, N] = A · Bᵀ.
void int8_gemm_nt(const TensorView& a, const TensorView& b, const TensorView& d, Stream stream = nullptr);

// Mixture-of-experts, the FP8 layouts' semantics (fgemm.hpp): a [M_sum, K], b [G, N, K], d [M_sum, N].
// Per token / per channel: sa [M_sum] (or [M_sum, 1], or 0-d), sb [G, N] (or [G], one scale per expert).
// Blocks: sa [M_sum, ceil(K/128)], sb [G, ceil(N/128), ceil(K/128)].
void m_grouped_int8_gemm_nt_contiguous(const TensorView& a, const TensorView& sa, const TensorView& b,
                                       const TensorView& sb, const TensorView& d, const TensorView& grouped_layout,
                                       ContiguousLayout layout = ContiguousLayout::MIndices, Stream stream = nullptr);

// Masked: a [G, M_max, K], b [G, N, K], d [G, M_max, N], masked_m and expected_m as for the FP8 GEMM.
// Per token / per channel: sa [G, M_max] (or [G, M_max, 1]), sb [G, N] (or [G]). Blocks: sa
// [G, M_max, ceil(K/128)], sb [G, ceil(N/128), ceil(K/128)].
void m_grouped_int8_gemm_nt_masked(const TensorView& a, const TensorView& sa, const TensorView& b,
                                   const TensorView& sb, const TensorView& d, const TensorView& masked_m,
                                   std::int64_t expected_m, Stream stream = nullptr);

}  // namespace fgemm
