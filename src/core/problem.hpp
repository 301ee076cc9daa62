// A validated GEMM call, reduced to what every backend needs: sizes, base pointers and strides.
// Built only by validate.cpp, so a backend may trust every field.
#pragma once

#include <cstdint>

#include "fgemm/tensor.hpp"

namespace fgemm::detail {

enum class GemmLayout : std::uint8_t { Normal, Contiguous, Masked };

// The FP8 recipe's scaling blocks: 1 x 128 of A, 128 x 128 of B.
constexpr std::int64_t kScaleBlock = 128;

const char* layout_name(GemmLayout layout);

// Strides are in elements. A "group" stride is the step between experts (0 where there is one group).
struct GemmProblem {
  GemmLayout layout = GemmLayout::Normal;
  Device device{};

  // Rows of A and D: M for normal, M_sum for contiguous, M_max (rows per group) for masked.
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t num_groups = 1;  // experts in B (and in A, D for masked)
  std::int64_t expected_m = 0;  // masked: the host's hint of rows per group

  const std::uint8_t* a = nullptr;  // E4M3 bytes
  std::int64_t a_row_stride = 0;
  std::int64_t a_group_stride = 0;

  const float* sfa = nullptr;  // element (m, kb) at sfa[m * sfa_m_stride + kb * sfa_k_stride]
  std::int64_t sfa_m_stride = 0;
  std::int64_t sfa_k_stride = 0;
  std::int64_t sfa_group_stride = 0;

  const std::uint8_t* b = nullptr;
  std::int64_t b_row_stride = 0;
  std::int64_t b_group_stride = 0;

  const float* sfb = nullptr;  // element (nb, kb) at sfb[nb * sfb_n_stride + kb * sfb_k_stride]
  std::int64_t sfb_n_stride = 0;
  std::int64_t sfb_k_stride = 0;
  std::int64_t sfb_group_stride = 0;

  void* d = nullptr;
  DType d_dtype = DType::BF16;
  std::int64_t d_row_stride = 0;
  std::int64_t d_group_stride = 0;

  const float* c = nullptr;  // optional
  std::int64_t c_row_stride = 0;
  std::int64_t c_group_stride = 0;

  const std::int32_t* m_indices = nullptr;  // contiguous: [m], expert of each row or -1
  const std::int32_t* masked_m = nullptr;   // masked: [num_groups], rows to compute per group

  std::int64_t k_blocks() const { return (k + kScaleBlock - 1) / kScaleBlock; }
  bool empty() const { return m == 0; }  // N and K are at least 1
};

}  // namespace fgemm::detail
