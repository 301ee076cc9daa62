// What the AVX-512 INT8 kernel sets (VNNI and AMX) share: A packed as bytes, B packed in quads of K, and the
// scaling of the per-token / per-channel recipe.
// Include only from files compiled with AVX-512 F/BW/VL and VNNI. Internal linkage on purpose (see
// avx512_common.hpp).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "cpu/avx512_common.hpp"
#include "cpu/int8_kernel_set.hpp"

namespace fgemm::cpu {
namespace {

// The panels of both sets: 32 columns, two vectors (or AMX tiles) of 16 INT32 sums.
constexpr int kQuadPanelCols = 32;
// A quad is four neighbouring values of K, the unit that vpdpbusd and TDPBSSD multiply; a panel's K block holds
// kBlockK / 4 rows of quads, each the 32 columns' four bytes.
constexpr std::int64_t kQuadRowBytes = kQuadPanelCols * 4;
constexpr std::int64_t kQuadBlockBytes = kBlockK / 4 * kQuadRowBytes;

// The bytes [k, k + 64) of a row of k_len bytes, zero past k_len (the row is not read beyond it).
inline __m512i load_run(const std::int8_t* row, std::int64_t k, std::int64_t k_len) {
  const std::int64_t count = k_len - k;
  const __mmask64 lanes = count >= 64 ? ~__mmask64(0) : count <= 0 ? __mmask64(0) : (__mmask64(1) << count) - 1;
  return _mm512_maskz_loadu_epi8(lanes, row + k);
}

// PackInt8A of both sets: A's bytes as they are, or with kFlipSignBits their sign bits flipped, which adds 128 to
// each and makes it an unsigned byte (the VNNI set's A; past k_len the zeros then become 128, its code of 0).
template <bool kFlipSignBits>
void pack_a_bytes(const std::int8_t* a, std::int64_t row_stride, std::int64_t rows, std::int64_t k_len,
                  std::int64_t packed_rows, void* packed) {
  const std::int64_t whole_blocks = (k_len + kBlockK - 1) / kBlockK * kBlockK;
  const __m512i sign_bits = _mm512_set1_epi8(static_cast<char>(kFlipSignBits ? 0x80 : 0));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < whole_blocks; k += 64) {
      auto* out = static_cast<std::uint8_t*>(packed) + (k / kBlockK * packed_rows + r) * kBlockK + k % kBlockK;
      _mm512_storeu_si512(out, _mm512_xor_si512(load_run(a + r * row_stride, k, k_len), sign_bits));
    }
}

// PackInt8B in quads: a panel's K block is [kBlockK / 4][kQuadPanelCols] quads. With kColumnSums, each block is
// followed by 32 INT32: 128 times each column's sum over the block (the VNNI kernels' correction).
template <bool kColumnSums>
void pack_b_quads(const std::int8_t* b, std::int64_t row_stride, std::int64_t cols, std::int64_t k_len, void* packed) {
  constexpr std::int64_t kBlockBytes = kQuadBlockBytes + (kColumnSums ? kQuadRowBytes : 0);
  const std::int64_t blocks = (k_len + kBlockK - 1) / kBlockK;
  for (std::int64_t panel_start = 0; panel_start < cols; panel_start += kQuadPanelCols) {
    auto* panel = static_cast<std::uint8_t*>(packed) + panel_start / kQuadPanelCols * blocks * kBlockBytes;
    // Each half of the panel reads its 16 rows of B from start to end, runs that the prefetcher follows.
    for (int half = 0; half < 2; ++half) {
      const std::int64_t first_col = panel_start + 16 * half;
      for (std::int64_t kb = 0; kb < blocks; ++kb) {
        std::uint8_t* block = panel + kb * kBlockBytes;
        __m512i column_sums = _mm512_setzero_si512();
        for (std::int64_t step = 0; step < kBlockK; step += 64) {
          // 16 columns' 64 values of K, 16 quads each; transposed, rows[q] holds quad q of the 16 columns.
          __m512i rows[16];
          for (int i = 0; i < 16; ++i)
            rows[i] = first_col + i < cols ? load_run(b + (first_col + i) * row_stride, kb * kBlockK + step, k_len)
                                           : _mm512_setzero_si512();
          transpose_16x16(rows);
          for (int q = 0; q < 16; ++q) {
            _mm512_store_si512(block + (step / 4 + q) * kQuadRowBytes + 64 * half, rows[q]);
            if constexpr (kColumnSums) column_sums = _mm512_dpbusd_epi32(column_sums, _mm512_set1_epi8(1), rows[q]);
          }
        }
        if constexpr (kColumnSums)
          _mm512_store_si512(block + kQuadBlockBytes + 64 * half, _mm512_slli_epi32(column_sums, 7));
      }
    }
  }
}

// ScaleInt8Row, 16 values at a time.
inline void scale_row(const std::int32_t* sums, float row_scale, const float* column_scales, const float* bias,
                      std::int64_t cols, float* values) {
  const __m512 row = _mm512_set1_ps(row_scale);
  for (std::int64_t j = 0; j < cols; j += 16) {
    const __mmask16 lanes = cols - j >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (cols - j)) - 1);
    const __m512 scale = _mm512_mul_ps(row, _mm512_maskz_loadu_ps(lanes, column_scales + j));
    __m512 value = _mm512_mul_ps(scale, _mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(lanes, sums + j)));
    if (bias) value = _mm512_add_ps(value, _mm512_maskz_loadu_ps(lanes, bias + j));
    _mm512_mask_storeu_ps(values + j, lanes, value);
  }
}

}  // namespace
}  // namespace fgemm::cpu
