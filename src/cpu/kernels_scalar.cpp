// The portable kernel set: plain C++ on FP32, for CPUs without AVX2.
#include <cstddef>
#include <utility>

#include "cpu/bf16.hpp"
#include "cpu/dot_tile.hpp"
#include "cpu/e4m3.hpp"
#include "cpu/f16.hpp"
#include "cpu/kernel_set.hpp"
#include "cpu/pack_16bit.hpp"

namespace fgemm::cpu {
namespace {

constexpr int kRows = 4;
constexpr int kCols = 16;
constexpr int kMaxDirectRows = 1;  // see KernelSet::max_direct_rows

void pack_a(const std::uint8_t* a, std::int64_t row_stride, std::int64_t rows, std::int64_t k_len,
            std::int64_t packed_rows, void* packed) {
  const std::int64_t padded_k = (k_len + kPadK - 1) / kPadK * kPadK;
  auto* out = static_cast<float*>(packed);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < padded_k; ++k)
      out[(k / kBlockK * packed_rows + r) * kBlockK + k % kBlockK] =
          k < k_len ? kE4m3.value[a[r * row_stride + k]] : 0.0f;
}

void decode_rows(const std::uint8_t* b, std::int64_t row_stride, std::int64_t rows, std::int64_t k, void* decoded) {
  const std::int64_t padded_k = (k + kPadK - 1) / kPadK * kPadK;
  auto* out = static_cast<float*>(decoded);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < padded_k; ++j)
      out[r * padded_k + j] = j < k ? kE4m3.value[b[r * row_stride + j]] : 0.0f;
}

// Panel layout: [kc][kCols], so that one step of K reads one row of kCols values.
void pack_b(const std::uint8_t* b, std::int64_t row_stride, std::int64_t cols, std::int64_t k_len, void* packed) {
  const std::int64_t padded_cols = (cols + kCols - 1) / kCols * kCols;
  for (std::int64_t k0 = 0; k0 < k_len; k0 += kBlockK) {
    const std::int64_t kc = k_len - k0 < kBlockK ? k_len - k0 : kBlockK;
    float* out = static_cast<float*>(packed) + k0 * padded_cols;
    for (std::int64_t panel_start = 0; panel_start < cols; panel_start += kCols, out += kc * kCols)
      for (std::int64_t k = 0; k < kc; ++k)
        for (std::int64_t j = 0; j < kCols; ++j) {
          const std::int64_t col = panel_start + j;
          out[k * kCols + j] = col < cols ? kE4m3.value[b[col * row_stride + k0 + k]] : 0.0f;
        }
  }
}

template <int kPanelRows>
void multiply_panel(const void* packed_a, const void* packed_b, std::int64_t kc, const float* row_scales, float* acc,
                    std::int64_t acc_stride, bool first_block) {
  const auto* a = static_cast<const float*>(packed_a);
  const auto* b = static_cast<const float*>(packed_b);
  float partial[kPanelRows][kCols] = {};
  for (std::int64_t k = 0; k < kc; ++k)
    for (int r = 0; r < kPanelRows; ++r)
      for (int j = 0; j < kCols; ++j) partial[r][j] += a[r * kBlockK + k] * b[k * kCols + j];
  for (int r = 0; r < kPanelRows; ++r)
    for (int j = 0; j < kCols; ++j) {
      const float scaled = row_scales[r] * partial[r][j];
      acc[r * acc_stride + j] = first_block ? scaled : acc[r * acc_stride + j] + scaled;
    }
}

constexpr int kDotTile = 4;

// The dot kernels' lanes (see dot_tile.hpp): one value at a time.
struct ScalarLanes {
  using Element = float;
  using Operand = float;
  using Sum = float;
  static constexpr std::int64_t kValues = 1;
  static constexpr int kLanes = 1;
  static Sum zero() { return 0.0f; }
  static Operand load(const Element* values) { return *values; }
  static Sum multiply_add(Sum sum, Operand a, Operand b) { return sum + a * b; }
  static Sum scale_add(float scale, Sum partial, Sum sum) { return sum + scale * partial; }
  static Sum load_sum(const float* lanes) { return *lanes; }
  static void store_sum(float* lanes, Sum sum) { *lanes = sum; }
  static float total(Sum sum) { return sum; }
};

void write_bf16_row(const float* sums, const float* c, std::int64_t cols, std::uint16_t* out) {
  for (std::int64_t j = 0; j < cols; ++j) out[j] = bf16_from_float(c ? sums[j] + c[j] : sums[j]);
}

template <std::size_t... kPanelIndex>
constexpr KernelSet make_kernel_set(std::index_sequence<kPanelIndex...>) {
  return {kMaxDirectRows,
          sizeof(float),
          kRows,
          kCols,
          pack_a,
          pack_b,
          {multiply_panel<kPanelIndex + 1>...},
          nullptr,
          make_dot_kernels<kDotTile, ScalarLanes>(decode_rows),
          write_bf16_row,
          write_f16_row_portable,
          make_packers_16bit<float, false, kCols>(),
          make_packers_16bit<float, true, kCols>(),
          nullptr,
          nullptr};
}

}  // namespace

constexpr KernelSet kScalarKernels = make_kernel_set(std::make_index_sequence<kRows>());

}  // namespace fgemm::cpu
