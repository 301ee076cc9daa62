// The AVX-512 kernel set with BF16 dot products: E4M3 decoded to BF16 (exact) while packing, and 14x32
// micro-kernels of vdpbf16ps, which adds the two exact products of a pair of K values into an FP32 sum.
// Each micro-kernel call sums one K block in FP32, as DESIGN §1 requires.
#include <immintrin.h>

#include <cstddef>
#include <utility>

#include "cpu/avx512_common.hpp"
#include "cpu/kernel_set.hpp"

namespace fgemm::cpu {
namespace {

constexpr int kRows = 14;  // 28 accumulators + 2 B vectors + a broadcast fill the 32 registers
constexpr int kCols = 32;

// A BF16 pair: two neighbouring values of K, the unit vdpbf16ps multiplies.
using Bf16Pair = std::uint32_t;

void pack_a(const std::uint8_t* a, std::int64_t row_stride, std::int64_t rows, std::int64_t k_len, void* packed) {
  const Bf16Table table = load_bf16_table();
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t k = 0; k < k_len; k += 32) {  // 32 divides kBlockK: a step never leaves its block
      const std::int64_t count = k_len - k < 32 ? 16 : 32;
      std::uint16_t* out = static_cast<std::uint16_t*>(packed) + (k / kBlockK * rows + r) * kBlockK + k % kBlockK;
      const __m512i bf16 = decode_to_bf16(table, load_codes(a + r * row_stride + k, count));
      if (count == 32)
        _mm512_store_si512(out, bf16);
      else
        _mm256_store_si256(reinterpret_cast<__m256i*>(out), _mm512_castsi512_si256(bf16));
    }
  }
}

// Panel layout: [kc / 2][kCols] pairs, built from 16x16 blocks of pairs: 16 columns' runs of 32 values of
// K (16 pairs), transposed.
void pack_b(const std::uint8_t* b, std::int64_t row_stride, std::int64_t cols, std::int64_t k_len, void* packed) {
  const Bf16Table table = load_bf16_table();
  const std::int64_t padded_cols = (cols + kCols - 1) / kCols * kCols;
  for (std::int64_t panel_start = 0; panel_start < cols; panel_start += kCols) {
    for (std::int64_t half = 0; half < kCols; half += 16) {
      for (std::int64_t k = 0; k < k_len; k += 32) {  // 32 divides kBlockK: a step never leaves its block
        const std::int64_t count = k_len - k < 32 ? 16 : 32;
        const std::int64_t block_start = k / kBlockK * kBlockK;
        const std::int64_t kc = k_len - block_start < kBlockK ? k_len - block_start : kBlockK;
        Bf16Pair* out = static_cast<Bf16Pair*>(packed) + (block_start * padded_cols + panel_start * kc) / 2 +
                        (k - block_start) / 2 * kCols + half;
        __m512i rows[16];
        for (int i = 0; i < 16; ++i) {
          const std::int64_t col = panel_start + half + i;
          rows[i] =
              col < cols ? decode_to_bf16(table, load_codes(b + col * row_stride + k, count)) : _mm512_setzero_si512();
        }
        transpose_16x16(rows);
        for (int j = 0; j < count / 2; ++j) _mm512_store_si512(out + j * kCols, rows[j]);
      }
    }
  }
}

template <int kPanelRows>
void multiply_panel(const void* packed_a, const void* packed_b, std::int64_t kc, const float* row_scales, float* acc,
                    std::int64_t acc_stride, bool first_block) {
  const auto* a = static_cast<const Bf16Pair*>(packed_a);
  const auto* b = static_cast<const __m512i*>(packed_b);
  __m512 partial[kPanelRows][2];
  for (int r = 0; r < kPanelRows; ++r) partial[r][0] = partial[r][1] = _mm512_setzero_ps();
  // kc >= 16, so the loop runs at least once; written as do-while because with a zero-trip path GCC keeps
  // a copy of the sums on the stack and stores to it every step.
  std::int64_t pair = 0;
  do {
    const __m512bh b0 = (__m512bh)_mm512_load_si512(b), b1 = (__m512bh)_mm512_load_si512(b + 1);
    for (int r = 0; r < kPanelRows; ++r) {
      const __m512bh a_pair = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[r * kBlockK / 2 + pair]));
      partial[r][0] = _mm512_dpbf16_ps(partial[r][0], a_pair, b0);
      partial[r][1] = _mm512_dpbf16_ps(partial[r][1], a_pair, b1);
    }
    b += 2;
  } while (++pair < kc / 2);
  accumulate_scaled<kPanelRows>(partial, row_scales, acc, acc_stride, first_block);
}

template <std::size_t... kIndex>
constexpr KernelSet make_kernel_set(std::index_sequence<kIndex...>) {
  return {kRows, kCols, sizeof(std::uint16_t), pack_a, pack_b, {multiply_panel<kIndex + 1>...}};
}

}  // namespace

constexpr KernelSet kAvx512Bf16Kernels = make_kernel_set(std::make_index_sequence<kRows>());

}  // namespace fgemm::cpu
