// The AVX2 kernel set: E4M3 decoded to FP32 while packing, 6x16 FMA micro-kernels and 4-pair FMA dot
// kernels.
#include <immintrin.h>

#include <cstddef>
#include <limits>
#include <utility>

#include "cpu/bf16.hpp"
#include "cpu/dot_tile.hpp"
#include "cpu/f16.hpp"
#include "cpu/kernel_set.hpp"
#include "cpu/pack_16bit.hpp"

namespace fgemm::cpu {
namespace {

constexpr int kRows = 6;  // 12 accumulators + 2 B vectors + a broadcast fill the 16 registers
constexpr int kCols = 16;
constexpr int kMaxDirectRows = 3;  // see KernelSet::max_direct_rows
constexpr int kDotTile = 4;        // 4 sums + 4 partial sums + the B vectors leave room in the 16 registers

// Eight E4M3 bytes to FP32, built from their bit fields: AVX2 has no in-register lookup into a 128-entry
// table, and a gather from kE4m3 is several times slower. The tests compare it with kE4m3 for every code.
__m256 decode8(const std::uint8_t* source) {
  const __m256i codes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(source)));
  const __m256i magnitude = _mm256_and_si256(codes, _mm256_set1_epi32(0x7F));
  // Normals: the exponent field rebiased from 7 to 127 (+120), the 3 mantissa bits at the top of FP32's 23.
  const __m256i normal = _mm256_add_epi32(_mm256_slli_epi32(magnitude, 20), _mm256_set1_epi32(120 << 23));
  // Subnormals (exponent field 0, magnitude < 8): magnitude * 2^-9, exact in FP32.
  const __m256 subnormal = _mm256_mul_ps(_mm256_cvtepi32_ps(magnitude), _mm256_set1_ps(1.0f / 512));
  const __m256i is_subnormal = _mm256_cmpgt_epi32(_mm256_set1_epi32(8), magnitude);
  const __m256i is_nan = _mm256_cmpeq_epi32(magnitude, _mm256_set1_epi32(0x7F));
  __m256 value = _mm256_blendv_ps(_mm256_castsi256_ps(normal), subnormal, _mm256_castsi256_ps(is_subnormal));
  value = _mm256_blendv_ps(value, _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN()), _mm256_castsi256_ps(is_nan));
  const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(codes, _mm256_set1_epi32(0x80)), 24);
  return _mm256_or_ps(value, _mm256_castsi256_ps(sign));
}

// Transposes 8 rows of 8 floats in place: rows[i] lane j becomes rows[j] lane i.
void transpose_8x8(__m256 rows[8]) {
  __m256 pairs[8], quads[8];
  for (int i = 0; i < 8; i += 2) {  // interleave rows i and i+1 within each 128-bit lane
    pairs[i] = _mm256_unpacklo_ps(rows[i], rows[i + 1]);
    pairs[i + 1] = _mm256_unpackhi_ps(rows[i], rows[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {  // quads[i + c] lane L = column 4L + c of rows i..i+3
    quads[i] = _mm256_shuffle_ps(pairs[i], pairs[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    quads[i + 1] = _mm256_shuffle_ps(pairs[i], pairs[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    quads[i + 2] = _mm256_shuffle_ps(pairs[i + 1], pairs[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    quads[i + 3] = _mm256_shuffle_ps(pairs[i + 1], pairs[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int c = 0; c < 4; ++c) {
    rows[c] = _mm256_permute2f128_ps(quads[c], quads[4 + c], 0x20);
    rows[4 + c] = _mm256_permute2f128_ps(quads[c], quads[4 + c], 0x31);
  }
}

void pack_a(const std::uint8_t* a, std::int64_t row_stride, std::int64_t rows, std::int64_t k_len,
            std::int64_t packed_rows, void* packed) {
  const std::int64_t padded_k = (k_len + kPadK - 1) / kPadK * kPadK;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < padded_k; k += 8) {
      float* out = static_cast<float*>(packed) + (k / kBlockK * packed_rows + r) * kBlockK + k % kBlockK;
      _mm256_store_ps(out, k < k_len ? decode8(a + r * row_stride + k) : _mm256_setzero_ps());
    }
}

void decode_rows(const std::uint8_t* b, std::int64_t row_stride, std::int64_t rows, std::int64_t k, void* decoded) {
  const std::int64_t padded_k = (k + kPadK - 1) / kPadK * kPadK;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < padded_k; j += 8)
      _mm256_storeu_ps(static_cast<float*>(decoded) + r * padded_k + j,
                       j < k ? decode8(b + r * row_stride + j) : _mm256_setzero_ps());
}

// Panel layout: [kc][kCols] FP32, built from transposed 8x8 blocks.
void pack_b(const std::uint8_t* b, std::int64_t row_stride, std::int64_t cols, std::int64_t k_len, void* packed) {
  const std::int64_t padded_cols = (cols + kCols - 1) / kCols * kCols;
  for (std::int64_t panel_start = 0; panel_start < cols; panel_start += kCols) {
    for (std::int64_t half = 0; half < kCols; half += 8) {
      for (std::int64_t k = 0; k < k_len; k += 8) {
        const std::int64_t block_start = k / kBlockK * kBlockK;
        const std::int64_t kc = k_len - block_start < kBlockK ? k_len - block_start : kBlockK;
        float* out = static_cast<float*>(packed) + block_start * padded_cols + panel_start * kc +
                     (k - block_start) * kCols + half;
        __m256 rows[8];
        for (int i = 0; i < 8; ++i) {
          const std::int64_t col = panel_start + half + i;
          rows[i] = col < cols ? decode8(b + col * row_stride + k) : _mm256_setzero_ps();
        }
        transpose_8x8(rows);
        for (int j = 0; j < 8; ++j) _mm256_store_ps(out + j * kCols, rows[j]);
      }
    }
  }
}

template <int kPanelRows>
void multiply_panel(const void* packed_a, const void* packed_b, std::int64_t kc, const float* row_scales, float* acc,
                    std::int64_t acc_stride, bool first_block) {
  const auto* a = static_cast<const float*>(packed_a);
  const auto* b = static_cast<const float*>(packed_b);
  __m256 partial[kPanelRows][2];
  for (int r = 0; r < kPanelRows; ++r) partial[r][0] = partial[r][1] = _mm256_setzero_ps();
  // kc >= 16, so the loop runs at least once; written as do-while because with a zero-trip path GCC keeps
  // a copy of the sums on the stack and stores to it every step.
  std::int64_t k = 0;
  do {
    const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
    for (int r = 0; r < kPanelRows; ++r) {
      const __m256 a_rk = _mm256_broadcast_ss(a + r * kBlockK + k);
      partial[r][0] = _mm256_fmadd_ps(a_rk, b0, partial[r][0]);
      partial[r][1] = _mm256_fmadd_ps(a_rk, b1, partial[r][1]);
    }
    b += kCols;
  } while (++k < kc);
  for (int r = 0; r < kPanelRows; ++r) {
    const __m256 scale = _mm256_set1_ps(row_scales[r]);
    float* row = acc + r * acc_stride;
    for (int j = 0; j < 2; ++j) {
      const __m256 sum = first_block ? _mm256_mul_ps(scale, partial[r][j])
                                     : _mm256_fmadd_ps(scale, partial[r][j], _mm256_load_ps(row + 8 * j));
      _mm256_store_ps(row + 8 * j, sum);
    }
  }
}

// The dot kernels' lanes (see dot_tile.hpp): 8 values of K in FP32.
struct Fp32Lanes {
  using Element = float;
  using Operand = __m256;
  using Sum = __m256;
  static constexpr std::int64_t kValues = 8;
  static constexpr int kLanes = 8;
  static Sum zero() { return _mm256_setzero_ps(); }
  static Operand load(const Element* values) { return _mm256_loadu_ps(values); }
  static Sum multiply_add(Sum sum, Operand a, Operand b) { return _mm256_fmadd_ps(a, b, sum); }
  static Sum scale_add(float scale, Sum partial, Sum sum) {
    return _mm256_fmadd_ps(_mm256_set1_ps(scale), partial, sum);
  }
  static Sum load_sum(const float* lanes) { return _mm256_load_ps(lanes); }
  static void store_sum(float* lanes, Sum sum) { _mm256_store_ps(lanes, sum); }
  static float total(Sum sum) {
    const __m128 quad = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
    const __m128 pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
    return _mm_cvtss_f32(_mm_add_ss(pair, _mm_movehdup_ps(pair)));
  }
};

// WriteBf16Row, 8 values at a time: the rounding of bf16_from_float on the bits of each FP32 value (a NaN
// keeps its upper half with the quiet bit set).
void write_bf16_row(const float* sums, const float* c, std::int64_t cols, std::uint16_t* out) {
  std::int64_t j = 0;
  for (; j + 8 <= cols; j += 8) {
    __m256 values = _mm256_loadu_ps(sums + j);
    if (c) values = _mm256_add_ps(values, _mm256_loadu_ps(c + j));
    const __m256i bits = _mm256_castps_si256(values);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7FFF)));
    const __m256 nan = _mm256_cmp_ps(values, values, _CMP_UNORD_Q);
    const __m256i quiet = _mm256_or_si256(bits, _mm256_set1_epi32(0x00400000));
    const __m256i upper = _mm256_srli_epi32(
        _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(rounded), _mm256_castsi256_ps(quiet), nan)), 16);
    // Packs the 32-bit lanes (each below 2^16) to 16 bits; the pack works per 128-bit half, so the halves'
    // results are brought together after it.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(upper, upper), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), _mm256_castsi256_si128(packed));
  }
  for (; j < cols; ++j) out[j] = bf16_from_float(c ? sums[j] + c[j] : sums[j]);
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
          make_dot_kernels<kDotTile, Fp32Lanes>(decode_rows),
          write_bf16_row,
          write_f16_row_portable,
          make_packers_16bit<float, false, kCols>(),
          make_packers_16bit<float, true, kCols>(),
          nullptr,
          nullptr};
}

}  // namespace

constexpr KernelSet kAvx2Kernels = make_kernel_set(std::make_index_sequence<kRows>());

}  // namespace fgemm::cpu
