// The AVX2 INT8 kernel set: A and B widened to 16 bits while packing, and 4x16 micro-kernels of vpmaddwd,
// which multiplies 16-bit values and adds each pair's two products exactly into an INT32. (vpmaddubsw, which
// multiplies unsigned by signed bytes, adds each pair's products into 16 bits, saturating: 2 * 255 * 128 does
// not fit.)
#include <immintrin.h>

#include <cstddef>
#include <cstring>
#include <utility>

#include "cpu/int8_kernel_set.hpp"

namespace fgemm::cpu {
namespace {

// 8 sums. GCC 12 keeps an array of more integer vectors in memory, storing it every step: measured on one core,
// 6 rows make 51 G products a second, 4 rows 77.
constexpr int kRows = 4;
constexpr int kCols = 16;
// A panel's K block: [kBlockK / 2 pairs of K][kCols] pairs of 16-bit values, 32 bits each.
constexpr std::int64_t kBBlockBytes = kBlockK / 2 * kCols * 4;

void pack_a(const std::int8_t* a, std::int64_t row_stride, std::int64_t rows, std::int64_t k_len,
            std::int64_t packed_rows, void* packed) {
  const std::int64_t whole_blocks = (k_len + kBlockK - 1) / kBlockK * kBlockK;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < whole_blocks; k += 16) {  // k_len is a multiple of 16
      auto* out = static_cast<std::int16_t*>(packed) + (k / kBlockK * packed_rows + r) * kBlockK + k % kBlockK;
      const __m256i values =
          k < k_len ? _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + r * row_stride + k)))
                    : _mm256_setzero_si256();
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), values);
    }
}

// Value by value: packing is a small part of the work, and the pairs' interleaving has no short vector form.
void pack_b(const std::int8_t* b, std::int64_t row_stride, std::int64_t cols, std::int64_t k_len, void* packed) {
  auto* out = static_cast<std::int16_t*>(packed);
  for (std::int64_t panel_start = 0; panel_start < cols; panel_start += kCols)
    for (std::int64_t k0 = 0; k0 < k_len; k0 += kBlockK, out += kBBlockBytes / 2)
      for (std::int64_t k = 0; k < kBlockK; ++k)
        for (std::int64_t j = 0; j < kCols; ++j) {
          const std::int64_t col = panel_start + j;
          out[(k / 2 * kCols + j) * 2 + k % 2] = col < cols && k0 + k < k_len ? b[col * row_stride + k0 + k] : 0;
        }
}

// The pair of 16-bit values at `values` in every 32-bit lane.
__m256i broadcast_pair(const std::int16_t* values) {
  std::int32_t pair;
  std::memcpy(&pair, values, sizeof pair);
  return _mm256_set1_epi32(pair);
}

// partial[r] += the products of one K block (kc values) of row r of packed A and the panel's 16 columns.
// Always inlined, so that partial stays in registers (see int8_kernels_avx512_vnni.cpp).
template <int kPanelRows>
[[gnu::always_inline]] inline void add_block_products(const std::int16_t* a, const __m256i* b, std::int64_t kc,
                                                      __m256i (&partial)[kPanelRows][2]) {
  // kc >= 16, so the loop runs at least once; written as do-while because with a zero-trip path GCC keeps
  // a copy of the sums on the stack and stores to it every step.
  std::int64_t pair = 0;
  do {
    const __m256i b0 = _mm256_load_si256(b + 2 * pair), b1 = _mm256_load_si256(b + 2 * pair + 1);
    for (int r = 0; r < kPanelRows; ++r) {
      const __m256i a_pair = broadcast_pair(a + r * kBlockK + 2 * pair);
      partial[r][0] = _mm256_add_epi32(partial[r][0], _mm256_madd_epi16(a_pair, b0));
      partial[r][1] = _mm256_add_epi32(partial[r][1], _mm256_madd_epi16(a_pair, b1));
    }
  } while (++pair < kc / 2);
}

template <int kPanelRows>
void sum_panel(const void* packed_a, std::int64_t a_block_stride, const void* packed_b, std::int64_t k_len,
               std::int32_t* sums, std::int64_t sums_stride, bool first) {
  const auto* a = static_cast<const std::int16_t*>(packed_a);
  const auto* b = static_cast<const __m256i*>(packed_b);
  __m256i partial[kPanelRows][2];
  for (int r = 0; r < kPanelRows; ++r) partial[r][0] = partial[r][1] = _mm256_setzero_si256();
  for (std::int64_t k0 = 0; k0 < k_len; k0 += kBlockK) {
    add_block_products<kPanelRows>(a, b, k_len - k0 < kBlockK ? k_len - k0 : kBlockK, partial);
    a += a_block_stride / 2;
    b += kBBlockBytes / sizeof(__m256i);
  }
  for (int r = 0; r < kPanelRows; ++r)
    for (int j = 0; j < 2; ++j) {
      auto* row = reinterpret_cast<__m256i*>(sums + r * sums_stride + 8 * j);
      _mm256_storeu_si256(row, first ? partial[r][j] : _mm256_add_epi32(partial[r][j], _mm256_loadu_si256(row)));
    }
}

template <int kPanelRows>
void block_panel(const void* packed_a, const void* packed_b, std::int64_t kc, const float* row_scales, float* acc,
                 std::int64_t acc_stride, bool first_block) {
  __m256i partial[kPanelRows][2];
  for (int r = 0; r < kPanelRows; ++r) partial[r][0] = partial[r][1] = _mm256_setzero_si256();
  add_block_products<kPanelRows>(static_cast<const std::int16_t*>(packed_a), static_cast<const __m256i*>(packed_b), kc,
                                 partial);
  for (int r = 0; r < kPanelRows; ++r) {
    const __m256 scale = _mm256_set1_ps(row_scales[r]);
    float* row = acc + r * acc_stride;
    for (int j = 0; j < 2; ++j) {
      const __m256 sum = _mm256_cvtepi32_ps(partial[r][j]);
      _mm256_storeu_ps(row + 8 * j, first_block ? _mm256_mul_ps(scale, sum)
                                                : _mm256_fmadd_ps(scale, sum, _mm256_loadu_ps(row + 8 * j)));
    }
  }
}

// ScaleInt8Row, 8 values at a time.
void scale_row(const std::int32_t* sums, float row_scale, const float* column_scales, const float* bias,
               std::int64_t cols, float* values) {
  const __m256 row = _mm256_set1_ps(row_scale);
  std::int64_t j = 0;
  for (; j + 8 <= cols; j += 8) {
    const __m256 scale = _mm256_mul_ps(row, _mm256_loadu_ps(column_scales + j));
    __m256 value =
        _mm256_mul_ps(scale, _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums + j))));
    if (bias) value = _mm256_add_ps(value, _mm256_loadu_ps(bias + j));
    _mm256_storeu_ps(values + j, value);
  }
  if (j < cols)  // the last columns, fewer than 8
    kScalarInt8Kernels.scale_row(sums + j, row_scale, column_scales + j, bias ? bias + j : nullptr, cols - j,
                                 values + j);
}

template <std::size_t... kPanelIndex>
constexpr Int8KernelSet make_kernel_set(std::index_sequence<kPanelIndex...>) {
  return {2,
          1,
          kRows,
          kCols,
          kBBlockBytes,
          pack_a,
          pack_b,
          {sum_panel<kPanelIndex + 1>...},
          {block_panel<kPanelIndex + 1>...},
          scale_row,
          &kAvx2Kernels,
          nullptr,
          nullptr};
}

}  // namespace

constexpr Int8KernelSet kAvx2Int8Kernels = make_kernel_set(std::make_index_sequence<kRows>());

}  // namespace fgemm::cpu
