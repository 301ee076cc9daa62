// A validated GEMM call, reduced to what every backend needs: sizes, base pointers and strides.
// Built only by validate.cpp, so a backend may trust every field.
#pragma once

#include <cstdint>
#include <vector>

#include "fgemm/tensor.hpp"

namespace fgemm::detail {

enum class GemmLayout : std::uint8_t { Normal, Contiguous, Masked, KGrouped };

// The FP8 recipe's scaling blocks: 1 x 128 of A, 128 x 128 of B.
constexpr std::int64_t kScaleBlock = 128;

// How sfa and sfb scale the products (docs/ARCHITECTURE.md, Semantics).
enum class Scaling : std::uint8_t {
  // DeepSeek-V3's blocks (FP8, INT8): sfa (m, kb) scales 1 x 128 of A, sfb (nb, kb) 128 x 128 of B, each K
  // block's sum promoted once ("1D2D").
  Block,
  // FP8 weight gradients ("1D1D"): sfa (m, kb) scales 1 x 128 of A and sfb (n, kb) 1 x 128 of B, each K block's
  // sum promoted once with the scales of its row and its column.
  RowBlocks,
  // No scales: BF16 and FP16, and INT8 into the exact INT32 sums (D int32).
  None,
  // INT8 W8A8: the whole sum of row m of A and row n of B times sfa[m] * sfb[n]; a zero stride repeats one
  // scale (per tensor).
  RowColumn,
};

const char* layout_name(GemmLayout layout);

// Strides are in elements. A "group" stride is the step between experts (0 where there is one group).
//
// A and B are stored K-major (A as [M, K], B as [N, K], K contiguous) or MN-major (A as [K, M], B as [K, N]);
// `*_row_stride` steps the stored matrix's outer dimension: M (or N) for K-major, K for MN-major.
struct GemmProblem {
  GemmLayout layout = GemmLayout::Normal;
  Device device{};
  DType ab_dtype = DType::E4M3;  // of A and B: E4M3, BF16, F16 or I8
  Scaling scaling = Scaling::Block;  // E4M3: Block or RowBlocks; BF16, F16: None; I8: Block, None or RowColumn

  // Rows of A and D: M for normal, M_sum for contiguous, M_max (rows per group) for masked, M (each
  // expert's) for k-grouped.
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;           // k-grouped: the sum of the experts' K
  std::int64_t num_groups = 1;  // experts in B (and in A, D for masked; in D for k-grouped)
  std::int64_t expected_m = 0;  // masked: the host's hint of rows per group

  // The bytes of A. FP8 k-grouped: expert g's [M, ks[g]] block (K-major, row stride ks[g]) starts at element
  // M times the K of the experts before it; likewise B's (a_row_stride and b_row_stride are 0).
  const std::uint8_t* a = nullptr;
  bool a_mn_major = false;
  std::int64_t a_row_stride = 0;
  std::int64_t a_group_stride = 0;

  // Block: element (m, kb) at sfa[m * sfa_m_stride + kb * sfa_k_stride]; RowColumn: element m at
  // sfa[m * sfa_m_stride] (sfa_k_stride 0).
  const float* sfa = nullptr;
  std::int64_t sfa_m_stride = 0;
  std::int64_t sfa_k_stride = 0;
  std::int64_t sfa_group_stride = 0;

  const std::uint8_t* b = nullptr;
  bool b_mn_major = false;
  std::int64_t b_row_stride = 0;
  std::int64_t b_group_stride = 0;

  // Block: element (nb, kb) at sfb[nb * sfb_n_stride + kb * sfb_k_stride]; RowBlocks: element (n, kb) at
  // sfb[n * sfb_n_stride + kb * sfb_k_stride]; RowColumn: element n at sfb[n * sfb_n_stride] (sfb_k_stride 0).
  const float* sfb = nullptr;
  std::int64_t sfb_n_stride = 0;
  std::int64_t sfb_k_stride = 0;
  std::int64_t sfb_group_stride = 0;

  void* d = nullptr;
  DType d_dtype = DType::BF16;
  std::int64_t d_row_stride = 0;
  std::int64_t d_group_stride = 0;

  const void* c = nullptr;  // optional, of D's shape: FP32, or D's 16-bit type where D is BF16 or FP16
  DType c_dtype = DType::F32;
  std::int64_t c_row_stride = 0;
  std::int64_t c_group_stride = 0;

  // INT8, normal layout: optional, [N] contiguous, FP32 or D's 16-bit type; D = C + bias + the scaled sums.
  const void* bias = nullptr;
  DType bias_dtype = DType::F32;

  // Contiguous: exactly one of the two names each row's expert (ContiguousLayout in fgemm.hpp).
  const std::int32_t* m_indices = nullptr;  // [m], the expert of each row or -1
  const std::int32_t* psum = nullptr;       // [num_groups], the prefix sums of the experts' rows
  // Packed D (the psum layout): D [d_rows, N] holds each expert's rows without their padding, expert g's from row
  // d_row_starts[g] on ([num_groups], on the device of a); null for every other D.
  const std::int32_t* d_row_starts = nullptr;
  std::int64_t d_rows = 0;
  const std::int32_t* masked_m = nullptr;   // masked: [num_groups], rows to compute per group
  // K-grouped: each expert's K, as the host was given it (validated against k) and on the device of the
  // tensors (what the GPU reads).
  std::vector<std::int64_t> ks;
  const std::int32_t* ks_tensor = nullptr;

  // C from a validated tensor: [M, N], or [G, M, N] in the k-grouped layout.
  void set_c(const TensorView& view) {
    c = view.data;
    c_dtype = view.dtype;
    c_row_stride = view.strides[view.ndim - 2];
    c_group_stride = view.ndim == 3 ? view.strides[0] : 0;
  }

  // C is D itself (validation allows it, or a C apart from D) and FP32: accumulation in place, which the GPU's
  // TMA store does by adding to D as it writes it (at short K the GPU reads D as a C of its own instead). A 16-bit
  // C that is D is read like a C of its own, so that D is rounded once, from C + A·B.
  bool adds_to_d() const {
    return c != nullptr && c == d && d_dtype == DType::F32 && c_row_stride == d_row_stride &&
           c_group_stride == d_group_stride;
  }

  std::int64_t k_blocks() const { return (k + kScaleBlock - 1) / kScaleBlock; }
  bool empty() const { return m == 0; }  // N is at least 1; K may be 0 only where experts are K-grouped
};

}  // namespace fgemm::detail
