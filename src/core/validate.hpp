// Argument checking for every public operation (docs/ARCHITECTURE.md, Semantics): the one place the contract is
// enforced.
#pragma once

#include <optional>
#include <vector>

#include "core/problem.hpp"
#include "fgemm/fgemm.hpp"

namespace fgemm::detail {

GemmProblem validate_normal(const TensorView& a, const TensorView& sfa, const TensorView& b,
                            const TensorView& sfb, const TensorView& d, const std::optional<TensorView>& c);

GemmProblem validate_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                const TensorView& sfb, const TensorView& d, const TensorView& grouped_layout,
                                ContiguousLayout form, const std::optional<TensorView>& d_row_starts = std::nullopt);

GemmProblem validate_masked(const TensorView& a, const TensorView& sfa, const TensorView& b,
                            const TensorView& sfb, const TensorView& d, const TensorView& masked_m,
                            std::int64_t expected_m);

// FP8 weight gradients of the experts (recipe 1D1D): the flat per-expert blocks of DeepGEMM's
// k_grouped_fp8_gemm_nt_contiguous (fgemm/fgemm.hpp).
GemmProblem validate_k_grouped_fp8(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                   const TensorView& sfb, const TensorView& d, const std::vector<std::int64_t>& ks,
                                   const TensorView& ks_tensor, const std::optional<TensorView>& c);

// A 16-bit GEMM operation: its name, its input type (BF16 or F16), and the operations that take A's and B's
// other storage order (for the message that refuses a transposed view; nullptr where there is none).
struct Gemm16Op {
  const char* name;
  DType dtype;
  const char* other_a;
  const char* other_b;
};

GemmProblem validate_dense_16bit(const Gemm16Op& op, bool a_mn_major, bool b_mn_major, const TensorView& a,
                                 const TensorView& b, const TensorView& d, const std::optional<TensorView>& c);

GemmProblem validate_contiguous_16bit(const Gemm16Op& op, bool b_mn_major, const TensorView& a, const TensorView& b,
                                      const TensorView& d, const TensorView& grouped_layout, ContiguousLayout form);

GemmProblem validate_masked_16bit(const Gemm16Op& op, const TensorView& a, const TensorView& b, const TensorView& d,
                                  const TensorView& masked_m, std::int64_t expected_m);

GemmProblem validate_k_grouped_16bit(const Gemm16Op& op, const TensorView& a, const TensorView& b,
                                     const TensorView& d, const std::vector<std::int64_t>& ks,
                                     const TensorView& ks_tensor, const std::optional<TensorView>& c);

// INT8 (validate_int8.cpp): the recipe is named by the shapes of sa and sb (fgemm/gemm_int8.hpp).
GemmProblem validate_int8_normal(const TensorView& a, const TensorView& sa, const TensorView& b, const TensorView& sb,
                                 const TensorView& d, const std::optional<TensorView>& c,
                                 const std::optional<TensorView>& bias);

GemmProblem validate_int8_exact(const TensorView& a, const TensorView& b, const TensorView& d);

GemmProblem validate_int8_contiguous(const TensorView& a, const TensorView& sa, const TensorView& b,
                                     const TensorView& sb, const TensorView& d, const TensorView& grouped_layout,
                                     ContiguousLayout form);

GemmProblem validate_int8_masked(const TensorView& a, const TensorView& sa, const TensorView& b, const TensorView& sb,
                                 const TensorView& d, const TensorView& masked_m, std::int64_t expected_m);

}  // namespace fgemm::detail
