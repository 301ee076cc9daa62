// The portable INT8 kernel set: plain C++ on the int8 values as they are.
#include <algorithm>
#include <cstddef>
#include <utility>

#include "cpu/int8_kernel_set.hpp"

namespace fgemm::cpu {
namespace {

constexpr int kRows = 4;
constexpr int kCols = 16;
constexpr std::int64_t kBBlockBytes = kBlockK * kCols;  // a panel's K block: [kBlockK][kCols]

std::int64_t whole_blocks(std::int64_t k_len) { return (k_len + kBlockK - 1) / kBlockK * kBlockK; }

void pack_a(const std::int8_t* a, std::int64_t row_stride, std::int64_t rows, std::int64_t k_len,
            std::int64_t packed_rows, void* packed) {
  auto* out = static_cast<std::int8_t*>(packed);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < whole_blocks(k_len); ++k)
      out[(k / kBlockK * packed_rows + r) * kBlockK + k % kBlockK] = k < k_len ? a[r * row_stride + k] : 0;
}

void pack_b(const std::int8_t* b, std::int64_t row_stride, std::int64_t cols, std::int64_t k_len, void* packed) {
  auto* out = static_cast<std::int8_t*>(packed);
  for (std::int64_t panel_start = 0; panel_start < cols; panel_start += kCols)
    for (std::int64_t k0 = 0; k0 < k_len; k0 += kBlockK, out += kBBlockBytes)
      for (std::int64_t k = 0; k < kBlockK; ++k)
        for (std::int64_t j = 0; j < kCols; ++j) {
          const std::int64_t col = panel_start + j;
          out[k * kCols + j] = col < cols && k0 + k < k_len ? b[col * row_stride + k0 + k] : 0;
        }
}

// partial[r][j] += the products of one K block (kc values) of row r of packed A and column j of a panel.
// Always inlined, so that partial stays in registers (see int8_kernels_avx512_vnni.cpp).
template <int kPanelRows, class Sum>
[[gnu::always_inline]] inline void add_block_products(const std::int8_t* a, const std::int8_t* b, std::int64_t kc,
                                                      Sum (&partial)[kPanelRows][kCols]) {
  for (std::int64_t k = 0; k < kc; ++k)
    for (int r = 0; r < kPanelRows; ++r)
      for (int j = 0; j < kCols; ++j) partial[r][j] += a[r * kBlockK + k] * b[k * kCols + j];
}

// Int8SumKernel. The partial sums are INT64, which no K overflows; adding them to the INT32 sums wraps
// modulo 2^32 (in unsigned arithmetic, where C++ defines it), as the vector sets' INT32 additions do.
template <int kPanelRows>
void sum_panel(const void* packed_a, std::int64_t a_block_stride, const void* packed_b, std::int64_t k_len,
               std::int32_t* sums, std::int64_t sums_stride, bool first) {
  const auto* a = static_cast<const std::int8_t*>(packed_a);
  const auto* b = static_cast<const std::int8_t*>(packed_b);
  std::int64_t partial[kPanelRows][kCols] = {};
  for (std::int64_t k0 = 0; k0 < k_len; k0 += kBlockK, a += a_block_stride, b += kBBlockBytes)
    add_block_products<kPanelRows>(a, b, std::min(kBlockK, k_len - k0), partial);
  for (int r = 0; r < kPanelRows; ++r)
    for (int j = 0; j < kCols; ++j) {
      std::int32_t& sum = sums[r * sums_stride + j];
      const std::uint32_t before = first ? 0u : static_cast<std::uint32_t>(sum);
      sum = static_cast<std::int32_t>(before + static_cast<std::uint32_t>(partial[r][j]));
    }
}

// Int8BlockKernel. A block's sums stay below 2^21 in magnitude (kBlockK products of at most 2^14).
template <int kPanelRows>
void block_panel(const void* packed_a, const void* packed_b, std::int64_t kc, const float* row_scales, float* acc,
                 std::int64_t acc_stride, bool first_block) {
  std::int32_t partial[kPanelRows][kCols] = {};
  add_block_products<kPanelRows>(static_cast<const std::int8_t*>(packed_a), static_cast<const std::int8_t*>(packed_b),
                                 kc, partial);
  for (int r = 0; r < kPanelRows; ++r)
    for (int j = 0; j < kCols; ++j) {
      const float scaled = row_scales[r] * static_cast<float>(partial[r][j]);
      float& out = acc[r * acc_stride + j];
      out = first_block ? scaled : out + scaled;
    }
}

void scale_row(const std::int32_t* sums, float row_scale, const float* column_scales, const float* bias,
               std::int64_t cols, float* values) {
  for (std::int64_t j = 0; j < cols; ++j) {
    const float value = row_scale * column_scales[j] * static_cast<float>(sums[j]);
    values[j] = bias ? value + bias[j] : value;
  }
}

template <std::size_t... kPanelIndex>
constexpr Int8KernelSet make_kernel_set(std::index_sequence<kPanelIndex...>) {
  return {1,
          1,
          kRows,
          kCols,
          kBBlockBytes,
          pack_a,
          pack_b,
          {sum_panel<kPanelIndex + 1>...},
          {block_panel<kPanelIndex + 1>...},
          scale_row,
          &kScalarKernels,
          nullptr,
          nullptr};
}

}  // namespace

constexpr Int8KernelSet kScalarInt8Kernels = make_kernel_set(std::make_index_sequence<kRows>());

}  // namespace fgemm::cpu
