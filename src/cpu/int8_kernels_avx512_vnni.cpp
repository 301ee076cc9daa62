// The AVX-512 VNNI INT8 kernel set: 14x32 micro-kernels of vpdpbusd, which adds the four products of four
// unsigned bytes and four signed bytes into an INT32. It has no signed x signed form, so A is the unsigned
// operand, packed with its sign bit flipped (A + 128, 0 to 255), and every K block of a packed B panel ends with
// 128 times its columns' sums, which the kernels subtract: sum((A + 128) * B) - 128 * sum(B) = sum(A * B),
// exactly in INT32 arithmetic modulo 2^32.
#include <immintrin.h>

#include <cstddef>
#include <cstring>
#include <utility>

#include "cpu/avx512_common.hpp"
#include "cpu/int8_avx512_common.hpp"
#include "cpu/int8_kernel_set.hpp"

namespace fgemm::cpu {
namespace {

constexpr int kRows = 14;  // 28 sums + 2 B vectors + a broadcast fill the 32 registers
constexpr std::int64_t kBBlockBytes = kQuadBlockBytes + kQuadRowBytes;  // the quads, then the corrections

// Flipping the sign bit adds 128 to a two's-complement byte and reads it as unsigned.
constexpr char kSignBit = static_cast<char>(0x80);

void pack_a(const std::int8_t* a, std::int64_t row_stride, std::int64_t rows, std::int64_t k_len,
            std::int64_t packed_rows, void* packed) {
  const std::int64_t whole_blocks = (k_len + kBlockK - 1) / kBlockK * kBlockK;
  const __m512i sign_bits = _mm512_set1_epi8(kSignBit);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < whole_blocks; k += 64) {
      auto* out = static_cast<std::uint8_t*>(packed) + (k / kBlockK * packed_rows + r) * kBlockK + k % kBlockK;
      // Past k_len the zeros become 128, the code of 0.
      _mm512_storeu_si512(out, _mm512_xor_si512(load_run(a + r * row_stride, k, k_len), sign_bits));
    }
}

void pack_b(const std::int8_t* b, std::int64_t row_stride, std::int64_t cols, std::int64_t k_len, void* packed) {
  pack_b_quads<true>(b, row_stride, cols, k_len, packed);
}

// The quad of row r's bytes at `a` in every 32-bit lane.
__m512i broadcast_quad(const std::uint8_t* a) {
  std::int32_t quad;
  std::memcpy(&quad, a, sizeof quad);
  return _mm512_set1_epi32(quad);
}

// partial[r] += the products of one K block (kc values) of row r of packed A and the panel's 32 columns,
// less the block's correction.
template <int kPanelRows>
[[gnu::always_inline]] inline void add_block_products(const std::uint8_t* a, const std::uint8_t* b, std::int64_t kc,
                        __m512i (&partial)[kPanelRows][2]) {
  // kc >= 16, so the loop runs at least once; written as do-while because with a zero-trip path GCC keeps
  // a copy of the sums on the stack and stores to it every step.
  std::int64_t quad = 0;
  do {
    const __m512i b0 = _mm512_load_si512(b + quad * kQuadRowBytes);
    const __m512i b1 = _mm512_load_si512(b + quad * kQuadRowBytes + 64);
    for (int r = 0; r < kPanelRows; ++r) {
      const __m512i a_quad = broadcast_quad(a + r * kBlockK + 4 * quad);
      partial[r][0] = _mm512_dpbusd_epi32(partial[r][0], a_quad, b0);
      partial[r][1] = _mm512_dpbusd_epi32(partial[r][1], a_quad, b1);
    }
  } while (++quad < kc / 4);
  // The correction covers the whole block; past kc, B is zero and so are its products.
  const __m512i correction0 = _mm512_load_si512(b + kQuadBlockBytes);
  const __m512i correction1 = _mm512_load_si512(b + kQuadBlockBytes + 64);
  for (int r = 0; r < kPanelRows; ++r) {
    partial[r][0] = _mm512_sub_epi32(partial[r][0], correction0);
    partial[r][1] = _mm512_sub_epi32(partial[r][1], correction1);
  }
}

template <int kPanelRows>
void sum_panel(const void* packed_a, std::int64_t a_block_stride, const void* packed_b, std::int64_t k_len,
               std::int32_t* sums, std::int64_t sums_stride, bool first) {
  const auto* a = static_cast<const std::uint8_t*>(packed_a);
  const auto* b = static_cast<const std::uint8_t*>(packed_b);
  __m512i partial[kPanelRows][2];
  for (int r = 0; r < kPanelRows; ++r) partial[r][0] = partial[r][1] = _mm512_setzero_si512();
  for (std::int64_t k0 = 0; k0 < k_len; k0 += kBlockK, a += a_block_stride, b += kBBlockBytes)
    add_block_products<kPanelRows>(a, b, k_len - k0 < kBlockK ? k_len - k0 : kBlockK, partial);
  for (int r = 0; r < kPanelRows; ++r)
    for (int j = 0; j < 2; ++j) {
      std::int32_t* row = sums + r * sums_stride + 16 * j;
      _mm512_storeu_si512(row, first ? partial[r][j] : _mm512_add_epi32(partial[r][j], _mm512_loadu_si512(row)));
    }
}

template <int kPanelRows>
void block_panel(const void* packed_a, const void* packed_b, std::int64_t kc, const float* row_scales, float* acc,
                 std::int64_t acc_stride, bool first_block) {
  __m512i partial[kPanelRows][2];
  for (int r = 0; r < kPanelRows; ++r) partial[r][0] = partial[r][1] = _mm512_setzero_si512();
  add_block_products<kPanelRows>(static_cast<const std::uint8_t*>(packed_a), static_cast<const std::uint8_t*>(packed_b),
                                 kc, partial);
  __m512 sums[kPanelRows][2];
  for (int r = 0; r < kPanelRows; ++r)
    for (int j = 0; j < 2; ++j) sums[r][j] = _mm512_cvtepi32_ps(partial[r][j]);
  accumulate_scaled<kPanelRows>(sums, row_scales, acc, acc_stride, first_block);
}

template <std::size_t... kPanelIndex>
constexpr Int8KernelSet make_kernel_set(std::index_sequence<kPanelIndex...>) {
  return {1,
          1,
          kRows,
          kQuadPanelCols,
          kBBlockBytes,
          pack_a,
          pack_b,
          {sum_panel<kPanelIndex + 1>...},
          {block_panel<kPanelIndex + 1>...},
          scale_row,
          &kAvx512Kernels,
          nullptr,
          nullptr};
}

}  // namespace

constexpr Int8KernelSet kAvx512VnniInt8Kernels = make_kernel_set(std::make_index_sequence<kRows>());

}  // namespace fgemm::cpu
