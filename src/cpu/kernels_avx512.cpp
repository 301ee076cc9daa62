// The AVX-512 kernel set with FP32 products: E4M3 decoded to FP32 while packing, 14x32 FMA micro-kernels and
// 8-pair FMA dot kernels.
#include <immintrin.h>

#include <cstddef>
#include <utility>

#include "cpu/avx512_common.hpp"
#include "cpu/dot_tile.hpp"
#include "cpu/f16.hpp"
#include "cpu/kernel_set.hpp"
#include "cpu/pack_16bit.hpp"

namespace fgemm::cpu {
namespace {

constexpr int kRows = 14;  // 28 accumulators + 2 B vectors + a broadcast fill the 32 registers
constexpr int kCols = 32;
constexpr int kMaxDirectRows = 4;  // see KernelSet::max_direct_rows

// Stores 32 BF16 values as FP32.
void store_widened(float* out, __m512i bf16) {
  _mm512_storeu_ps(out, widen_bf16(_mm512_castsi512_si256(bf16)));
  _mm512_storeu_ps(out + 16, widen_bf16(_mm512_extracti64x4_epi64(bf16, 1)));
}

void pack_a(const std::uint8_t* a, std::int64_t row_stride, std::int64_t rows, std::int64_t k_len,
            std::int64_t packed_rows, void* packed) {
  auto* out = static_cast<float*>(packed);
  pack_a_with(a, row_stride, rows, k_len, packed_rows,
              [out](std::int64_t element, __m512i bf16) { store_widened(out + element, bf16); });
}

void decode_rows(const std::uint8_t* b, std::int64_t row_stride, std::int64_t rows, std::int64_t k, void* decoded) {
  auto* out = static_cast<float*>(decoded);
  decode_rows_with(b, row_stride, rows, k,
                   [out](std::int64_t element, __m512i bf16) { store_widened(out + element, bf16); });
}

// The 16 E4M3 bytes of row `col` of B from K offset k on, or zeros for a row past the last.
__m128i row_codes(const std::uint8_t* b, std::int64_t row_stride, std::int64_t col, std::int64_t cols, std::int64_t k) {
  return col < cols ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + col * row_stride + k)) : _mm_setzero_si128();
}

// Panel layout: [kc][kCols] FP32, built from 16x16 blocks: 16 columns' runs of 16 values of K, decoded two
// at a time (one 32-byte decode), then transposed.
void pack_b(const std::uint8_t* b, std::int64_t row_stride, std::int64_t cols, std::int64_t k_len, void* packed) {
  const Bf16Table table = load_bf16_table();
  const std::int64_t padded_cols = (cols + kCols - 1) / kCols * kCols;
  for (std::int64_t panel_start = 0; panel_start < cols; panel_start += kCols) {
    for (std::int64_t half = 0; half < kCols; half += 16) {
      for (std::int64_t k = 0; k < k_len; k += 16) {
        const std::int64_t block_start = k / kBlockK * kBlockK;
        const std::int64_t kc = k_len - block_start < kBlockK ? k_len - block_start : kBlockK;
        float* out = static_cast<float*>(packed) + block_start * padded_cols + panel_start * kc +
                     (k - block_start) * kCols + half;
        __m512i rows[16];
        for (int i = 0; i < 16; i += 2) {
          const std::int64_t col = panel_start + half + i;
          const __m256i codes = _mm256_inserti128_si256(_mm256_castsi128_si256(row_codes(b, row_stride, col, cols, k)),
                                                        row_codes(b, row_stride, col + 1, cols, k), 1);
          const __m512i bf16 = decode_to_bf16(table, codes);
          rows[i] = _mm512_castps_si512(widen_bf16(_mm512_castsi512_si256(bf16)));
          rows[i + 1] = _mm512_castps_si512(widen_bf16(_mm512_extracti64x4_epi64(bf16, 1)));
        }
        transpose_16x16(rows);
        for (int j = 0; j < 16; ++j) _mm512_store_si512(out + j * kCols, rows[j]);
      }
    }
  }
}

// The lanes of the first `count` of 16 values.
__mmask16 first_16(std::int64_t count) {
  return count >= 16 ? __mmask16(0xFFFF) : count <= 0 ? __mmask16(0) : static_cast<__mmask16>((1u << count) - 1);
}

// Sixteen FP16 (kF16) or BF16 values to FP32, exactly.
template <bool kF16>
__m512 widen_16bit(__m256i values) {
  if constexpr (kF16)
    return _mm512_cvtph_ps(values);
  else
    return widen_bf16(values);
}

// Pack16B with vector loads and conversions (the portable packer, one value at a time, took a large share of
// a GEMM's time): a K-major B in 16x16 blocks transposed as pack_b does, an MN-major one row of K at a time.
template <bool kF16>
void pack_b_16bit_vector(const Matrix16& b, std::int64_t cols, std::int64_t k_len, std::int64_t k_valid,
                         void* packed) {
  const std::int64_t padded_cols = (cols + kCols - 1) / kCols * kCols;
  for (std::int64_t panel_start = 0; panel_start < padded_cols; panel_start += kCols) {
    for (std::int64_t k = 0; k < k_len; k += 16) {  // 16 divides kBlockK: a step never leaves its block
      const std::int64_t block_start = k / kBlockK * kBlockK;
      const std::int64_t kc = k_len - block_start < kBlockK ? k_len - block_start : kBlockK;
      float* out =
          static_cast<float*>(packed) + block_start * padded_cols + panel_start * kc + (k - block_start) * kCols;
      if (b.k_stride == 1) {
        for (std::int64_t half = 0; half < kCols; half += 16) {
          __m512i rows[16];
          for (int i = 0; i < 16; ++i) {
            const std::int64_t col = panel_start + half + i;
            const __m256i values =
                col < cols ? _mm256_maskz_loadu_epi16(first_16(k_valid - k), b.data + col * b.i_stride + k)
                           : _mm256_setzero_si256();
            rows[i] = _mm512_castps_si512(widen_16bit<kF16>(values));
          }
          transpose_16x16(rows);
          for (int j = 0; j < 16; ++j) _mm512_store_si512(out + j * kCols + half, rows[j]);
        }
        continue;
      }
      for (int j = 0; j < 16; ++j) {
        const std::uint16_t* row = b.data + (k + j) * b.k_stride + panel_start;
        for (std::int64_t half = 0; half < kCols; half += 16) {
          const __mmask16 lanes = k + j < k_valid ? first_16(cols - panel_start - half) : __mmask16(0);
          _mm512_store_ps(out + j * kCols + half, widen_16bit<kF16>(_mm256_maskz_loadu_epi16(lanes, row + half)));
        }
      }
    }
  }
}

// The portable packers of one 16-bit type, with the vector pack_b above.
template <bool kF16>
constexpr Packers16 packers_16bit() {
  const Packers16 portable = make_packers_16bit<float, kF16, kCols>();
  return {portable.pack_a, pack_b_16bit_vector<kF16>, portable.decode_rows};
}

template <int kPanelRows>
void multiply_panel(const void* packed_a, const void* packed_b, std::int64_t kc, const float* row_scales, float* acc,
                    std::int64_t acc_stride, bool first_block) {
  const auto* a = static_cast<const float*>(packed_a);
  const auto* b = static_cast<const float*>(packed_b);
  __m512 partial[kPanelRows][2];
  for (int r = 0; r < kPanelRows; ++r) partial[r][0] = partial[r][1] = _mm512_setzero_ps();
  // kc >= 16, so the loop runs at least once; written as do-while because with a zero-trip path GCC keeps
  // a copy of the sums on the stack and stores to it every step.
  std::int64_t k = 0;
  do {
    const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
    for (int r = 0; r < kPanelRows; ++r) {
      const __m512 a_rk = _mm512_set1_ps(a[r * kBlockK + k]);
      partial[r][0] = _mm512_fmadd_ps(a_rk, b0, partial[r][0]);
      partial[r][1] = _mm512_fmadd_ps(a_rk, b1, partial[r][1]);
    }
    b += kCols;
  } while (++k < kc);
  accumulate_scaled<kPanelRows>(partial, row_scales, acc, acc_stride, first_block);
}

// WriteF16Row, 16 values at a time: vcvtps2ph rounds as f16_from_float does.
void write_f16_row(const float* sums, const float* c, std::int64_t cols, std::uint16_t* out) {
  for (std::int64_t j = 0; j < cols; j += 16) {
    const __mmask16 lanes = first_16(cols - j);
    __m512 values = _mm512_maskz_loadu_ps(lanes, sums + j);
    if (c) values = _mm512_add_ps(values, _mm512_maskz_loadu_ps(lanes, c + j));
    _mm256_mask_storeu_epi16(out + j, lanes, _mm512_cvtps_ph(values, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
}

// The dot kernels' lanes (see dot_tile.hpp): 16 values of K in FP32.
struct Fp32Lanes : Avx512Sums {
  using Element = float;
  using Operand = __m512;
  static constexpr std::int64_t kValues = 16;
  static Operand load(const Element* values) { return _mm512_loadu_ps(values); }
  static Sum multiply_add(Sum sum, Operand a, Operand b) { return _mm512_fmadd_ps(a, b, sum); }
};

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
          make_dot_kernels<kDotTile, Fp32Lanes>(decode_rows),
          write_bf16_row,
          write_f16_row,
          packers_16bit<false>(),
          packers_16bit<true>(),
          nullptr,
          nullptr};
}

}  // namespace

constexpr KernelSet kAvx512Kernels = make_kernel_set(std::make_index_sequence<kRows>());

}  // namespace fgemm::cpu
