// BF16 and FP16 GEMMs, with DeepGEMM's names and semantics: D = C + A·B in FP32 accumulators, the layout
// letters naming how A and B are stored.
//
//   letters  a          b          D = C + ...
//   nt       [M, K]     [N, K]     a · bᵀ
//   nn       [M, K]     [K, N]     a · b
//   tn       [K, M]     [K, N]     aᵀ · b
//   tt       [K, M]     [N, K]     aᵀ · bᵀ
//
// Each operand is contiguous in its last dimension (the letter's storage order; a transposed view of the
// other order is refused with an error naming the function to call instead), and every other stride is a
// multiple of 16 bytes. A and B are both bfloat16 (bf16_*) or both float16 (fp16_*); D is that type or FP32;
// C, where given, is of D's shape, FP32 or D's type, and may be D itself (accumulation in place, DeepGEMM's
// c = d). Tensors on the CPU run the CPU backend, tensors on a CUDA device the sm90 kernels on `stream`. Every
// argument is validated and a violation throws fgemm::Error naming the argument, what was expected and what was
// given (docs/ARCHITECTURE.md, Semantics).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fgemm/fgemm.hpp"

namespace fgemm {

// ---- dense ----------------------------------------------------------------------------------------------

void bf16_gemm_nt(const TensorView& a, const TensorView& b, const TensorView& d,
                  const std::optional<TensorView>& c = std::nullopt, Stream stream = nullptr);
void bf16_gemm_nn(const TensorView& a, const TensorView& b, const TensorView& d,
                  const std::optional<TensorView>& c = std::nullopt, Stream stream = nullptr);
void bf16_gemm_tn(const TensorView& a, const TensorView& b, const TensorView& d,
                  const std::optional<TensorView>& c = std::nullopt, Stream stream = nullptr);
void bf16_gemm_tt(const TensorView& a, const TensorView& b, const TensorView& d,
                  const std::optional<TensorView>& c = std::nullopt, Stream stream = nullptr);

void fp16_gemm_nt(const TensorView& a, const TensorView& b, const TensorView& d,
                  const std::optional<TensorView>& c = std::nullopt, Stream stream = nullptr);
void fp16_gemm_nn(const TensorView& a, const TensorView& b, const TensorView& d,
                  const std::optional<TensorView>& c = std::nullopt, Stream stream = nullptr);
void fp16_gemm_tn(const TensorView& a, const TensorView& b, const TensorView& d,
                  const std::optional<TensorView>& c = std::nullopt, Stream stream = nullptr);
void fp16_gemm_tt(const TensorView& a, const TensorView& b, const TensorView& d,
                  const std::optional<TensorView>& c = std::nullopt, Stream stream = nullptr);

// ---- Mixture-of-Experts, M grouped ------------------------------------------------------------------------

// Contiguous layout: a [M_sum, K], b [G, N, K] (nt) or [G, K, N] (nn), d [M_sum, N]. `grouped_layout` is int32
// on the device of the others, either m_indices [M_sum] (ContiguousLayout::MIndices, as the FP8 GEMM takes it)
// or the prefix sums [G] (ContiguousLayout::Psum). Rows that belong to no expert keep what D held.
void m_grouped_bf16_gemm_nt_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const TensorView& grouped_layout,
                                       ContiguousLayout layout = ContiguousLayout::MIndices, Stream stream = nullptr);
void m_grouped_bf16_gemm_nn_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const TensorView& grouped_layout,
                                       ContiguousLayout layout = ContiguousLayout::MIndices, Stream stream = nullptr);
void m_grouped_fp16_gemm_nt_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const TensorView& grouped_layout,
                                       ContiguousLayout layout = ContiguousLayout::MIndices, Stream stream = nullptr);
void m_grouped_fp16_gemm_nn_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const TensorView& grouped_layout,
                                       ContiguousLayout layout = ContiguousLayout::MIndices, Stream stream = nullptr);

// Masked layout: a [G, M_max, K], b [G, N, K], d [G, M_max, N]; masked_m and expected_m as for the FP8 GEMM.
void m_grouped_bf16_gemm_nt_masked(const TensorView& a, const TensorView& b, const TensorView& d,
                                   const TensorView& masked_m, std::int64_t expected_m, Stream stream = nullptr);
void m_grouped_fp16_gemm_nt_masked(const TensorView& a, const TensorView& b, const TensorView& d,
                                   const TensorView& masked_m, std::int64_t expected_m, Stream stream = nullptr);

// ---- Mixture-of-Experts, K grouped (the experts' weight gradient) -----------------------------------------

// D[g] = C[g] + A_gᵀ · B_g: a [ΣK, M] and b [ΣK, N], expert g's rows being the ks[g] that follow the experts
// before it; d and c FP32 [G, M, N]. `ks` (the host's copy) and `ks_tensor` (int32 [G] on the device of the
// others, what the GPU kernel reads, so that the call can be captured in a CUDA graph) hold the same counts,
// each a multiple of 128 (kMAlignmentForContiguousLayout) and possibly 0: an empty expert's D[g] is C[g], or
// zeros without C.
void k_grouped_bf16_gemm_tn_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const std::vector<std::int64_t>& ks, const TensorView& ks_tensor,
                                       const std::optional<TensorView>& c = std::nullopt, Stream stream = nullptr);
void k_grouped_fp16_gemm_tn_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const std::vector<std::int64_t>& ks, const TensorView& ks_tensor,
                                       const std::optional<TensorView>& c = std::nullopt, Stream stream = nullptr);

}  // namespace fgemm
