// What the two AVX-512 kernel sets share: E4M3 decoding (packing A, decoding rows of B), the 16x16 transpose
// of B blocks, and the scaled accumulation of a micro-kernel's partial sums. Include only from files compiled
// with AVX-512 F/BW/VL.
//
// Everything here has internal linkage on purpose: the including files are compiled with different
// instruction-set flags, and an inline function with external linkage could be merged by the linker into
// one copy compiled for an instruction set the CPU lacks.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "cpu/e4m3.hpp"
#include "cpu/kernel_set.hpp"

namespace fgemm::cpu {
namespace {

// The BF16 bit patterns of the 128 non-negative E4M3 codes (the upper halves of their exact FP32 values),
// 32 per register: a table that vpermi2w looks 64 entries up in at a time.
struct Bf16Table {
  __m512i part[4];
};

inline Bf16Table load_bf16_table() {
  Bf16Table table;
  for (int i = 0; i < 4; ++i) {
    const __m512i low = _mm512_srli_epi32(_mm512_castps_si512(_mm512_loadu_ps(kE4m3.value + 32 * i)), 16);
    const __m512i high = _mm512_srli_epi32(_mm512_castps_si512(_mm512_loadu_ps(kE4m3.value + 32 * i + 16)), 16);
    table.part[i] =
        _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi32_epi16(low)), _mm512_cvtepi32_epi16(high), 1);
  }
  return table;
}

// 32 E4M3 bytes to 32 BF16 bit patterns: the magnitude (7 bits) looked up in the table, the sign copied.
inline __m512i decode_to_bf16(const Bf16Table& table, __m256i bytes) {
  const __m512i codes = _mm512_cvtepu8_epi16(bytes);
  const __m512i below_64 = _mm512_permutex2var_epi16(table.part[0], codes, table.part[1]);
  const __m512i from_64 = _mm512_permutex2var_epi16(table.part[2], codes, table.part[3]);
  const __mmask32 high_half = _mm512_test_epi16_mask(codes, _mm512_set1_epi16(0x40));
  const __m512i magnitude = _mm512_mask_blend_epi16(high_half, below_64, from_64);
  const __m512i sign = _mm512_and_si512(_mm512_slli_epi16(codes, 8), _mm512_set1_epi16(static_cast<short>(0x8000)));
  return _mm512_or_si512(magnitude, sign);
}

// The first (count <= 32, a multiple of 16) E4M3 bytes at `source`, without reading past them; zeros (the
// code of +0) after them.
inline __m256i load_codes(const std::uint8_t* source, std::int64_t count) {
  return count == 32 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(source))
                     : _mm256_zextsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(source)));
}

// Decodes `count` (a multiple of 16) E4M3 bytes at `codes` to BF16 in pieces of 32, the last one zero-filled
// if count is not a multiple of 32: calls store(offset, bf16) for each.
template <class Store>
inline void decode_run(const Bf16Table& table, const std::uint8_t* codes, std::int64_t count, Store store) {
  for (std::int64_t offset = 0; offset < count; offset += 32)
    store(offset, decode_to_bf16(table, load_codes(codes + offset, count - offset < 32 ? 16 : 32)));
}

// PackA for both AVX-512 kernel sets: write(element, bf16) stores a decoded piece of 32 values (see
// decode_run) at element `element` of the packed A, in the set's element type.
template <class Write>
inline void pack_a_with(const std::uint8_t* a, std::int64_t row_stride, std::int64_t rows, std::int64_t k_len,
                        std::int64_t packed_rows, Write write) {
  const Bf16Table table = load_bf16_table();
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t start = 0; start < k_len; start += kBlockK) {
      const std::int64_t first = (start / kBlockK * packed_rows + r) * kBlockK;
      decode_run(table, a + r * row_stride + start, k_len - start < kBlockK ? k_len - start : kBlockK,
                 [&](std::int64_t offset, __m512i bf16) { write(first + offset, bf16); });
    }
}

// DecodeRows for both AVX-512 kernel sets, with `write` as in pack_a_with.
template <class Write>
inline void decode_rows_with(const std::uint8_t* b, std::int64_t row_stride, std::int64_t rows, std::int64_t k,
                             Write write) {
  const Bf16Table table = load_bf16_table();
  const std::int64_t padded_k = (k + kPadK - 1) / kPadK * kPadK;
  for (std::int64_t r = 0; r < rows; ++r)
    decode_run(table, b + r * row_stride, k,
               [&](std::int64_t offset, __m512i bf16) { write(r * padded_k + offset, bf16); });
}

// Sixteen BF16 bit patterns (16-bit lanes) to FP32 (32-bit lanes), exactly.
inline __m512 widen_bf16(__m256i bf16) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bf16), 16));
}

// Transposes 16 rows of 16 32-bit elements in place: rows[i] lane j becomes rows[j] lane i.
inline void transpose_16x16(__m512i rows[16]) {
  __m512i pairs[16], quads[16];
  for (int i = 0; i < 16; i += 2) {  // 32-bit interleave of rows i and i+1 within each 128-bit lane
    pairs[i] = _mm512_unpacklo_epi32(rows[i], rows[i + 1]);
    pairs[i + 1] = _mm512_unpackhi_epi32(rows[i], rows[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {  // 64-bit interleave: quads[i + c] lane L = column 4L + c of rows i..i+3
    quads[i] = _mm512_unpacklo_epi64(pairs[i], pairs[i + 2]);
    quads[i + 1] = _mm512_unpackhi_epi64(pairs[i], pairs[i + 2]);
    quads[i + 2] = _mm512_unpacklo_epi64(pairs[i + 1], pairs[i + 3]);
    quads[i + 3] = _mm512_unpackhi_epi64(pairs[i + 1], pairs[i + 3]);
  }
  for (int c = 0; c < 4; ++c) {  // 4x4 transpose of 128-bit lanes across quads[c], quads[4 + c], ...
    const __m512i q01_low = _mm512_shuffle_i32x4(quads[c], quads[4 + c], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512i q01_high = _mm512_shuffle_i32x4(quads[c], quads[4 + c], _MM_SHUFFLE(3, 2, 3, 2));
    const __m512i q23_low = _mm512_shuffle_i32x4(quads[8 + c], quads[12 + c], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512i q23_high = _mm512_shuffle_i32x4(quads[8 + c], quads[12 + c], _MM_SHUFFLE(3, 2, 3, 2));
    rows[c] = _mm512_shuffle_i32x4(q01_low, q23_low, _MM_SHUFFLE(2, 0, 2, 0));
    rows[4 + c] = _mm512_shuffle_i32x4(q01_low, q23_low, _MM_SHUFFLE(3, 1, 3, 1));
    rows[8 + c] = _mm512_shuffle_i32x4(q01_high, q23_high, _MM_SHUFFLE(2, 0, 2, 0));
    rows[12 + c] = _mm512_shuffle_i32x4(q01_high, q23_high, _MM_SHUFFLE(3, 1, 3, 1));
  }
}

// acc = row_scale * partial (first K block) or acc += row_scale * partial, for kRows rows of 32 columns.
template <int kRows>
inline void accumulate_scaled(const __m512 partial[kRows][2], const float* row_scales, float* acc,
                              std::int64_t acc_stride, bool first_block) {
  for (int r = 0; r < kRows; ++r) {
    const __m512 scale = _mm512_set1_ps(row_scales[r]);
    float* row = acc + r * acc_stride;
    for (int j = 0; j < 2; ++j) {
      const __m512 sum = first_block ? _mm512_mul_ps(scale, partial[r][j])
                                     : _mm512_fmadd_ps(scale, partial[r][j], _mm512_load_ps(row + 16 * j));
      _mm512_store_ps(row + 16 * j, sum);
    }
  }
}

// WriteBf16Row for both AVX-512 kernel sets, 16 values at a time: the rounding of bf16_from_float on the
// bits of each FP32 value (a NaN keeps its upper half with the quiet bit set).
inline void write_bf16_row(const float* sums, const float* c, std::int64_t cols, std::uint16_t* out) {
  for (std::int64_t j = 0; j < cols; j += 16) {
    const __mmask16 lanes = cols - j >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (cols - j)) - 1);
    __m512 values = _mm512_maskz_loadu_ps(lanes, sums + j);
    if (c) values = _mm512_add_ps(values, _mm512_maskz_loadu_ps(lanes, c + j));
    const __m512i bits = _mm512_castps_si512(values);
    const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7FFF)));
    const __mmask16 nan = _mm512_cmp_ps_mask(values, values, _CMP_UNORD_Q);
    const __m512i upper = _mm512_srli_epi32(
        _mm512_mask_blend_epi32(nan, rounded, _mm512_or_si512(bits, _mm512_set1_epi32(0x00400000))), 16);
    _mm256_mask_storeu_epi16(out + j, lanes, _mm512_cvtepi32_epi16(upper));
  }
}

// The tile of the AVX-512 dot kernels: 8 sums + 8 partial sums + the B vectors leave room for the rest.
constexpr int kDotTile = 8;

// What the Lanes of both AVX-512 kernel sets share (see dot_tile.hpp): sums of 16 FP32 lanes.
struct Avx512Sums {
  using Sum = __m512;
  static constexpr int kLanes = 16;
  static Sum zero() { return _mm512_setzero_ps(); }
  static Sum scale_add(float scale, Sum partial, Sum sum) {
    return _mm512_fmadd_ps(_mm512_set1_ps(scale), partial, sum);
  }
  static Sum load_sum(const float* lanes) { return _mm512_load_ps(lanes); }
  static void store_sum(float* lanes, Sum sum) { _mm512_store_ps(lanes, sum); }
  static float total(Sum sum) { return _mm512_reduce_add_ps(sum); }
};

}  // namespace
}  // namespace fgemm::cpu
