// The AVX-512 VNNI INT8 kernel set: 7x32 micro-kernels of vpdpbusd, which adds the four products of four
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

// 14 sums. More rows would use each B vector more often, but vpdpbusd issues once per cycle with 7 rows already
// (measured: 217 G products a second on one core, 64 per instruction), and GCC 12 keeps an array of more
// integer vectors in memory, storing it every step (measured: 10 rows and more).
constexpr int kRows = 7;
constexpr std::int64_t kBBlockBytes = kQuadBlockBytes + kQuadRowBytes;  // the quads, then the corrections

void pack_b(const std::int8_t* b, std::int64_t row_stride, std::int64_t cols, std::int64_t k_len, void* packed) {
  pack_b_quads<true>(b, row_stride, cols, k_len, packed);
}

// The quad of row r's bytes at `a` in every 32-bit lane.
__m512i broadcast_quad(const std::uint8_t* a) {
  std::int32_t quad;
  std::memcpy(&quad, a, sizeof quad);
  return _mm512_set1_epi32(quad);
}

// partial[r] += the products of row r of packed A and the panel's 32 columns over k_len values of K (a multiple
// of 16, from a K block boundary; A's K blocks a_block_stride bytes apart): one loop over the quads, whichever
// block they lie in. Always inlined, so that partial is the caller's local array and stays in registers: out of
// line, the byte loads of A could alias it, and every step would store it to memory.
template <int kPanelRows>
[[gnu::always_inline]] inline void add_products(const std::uint8_t* a, std::int64_t a_block_stride,
                                                const std::uint8_t* b, std::int64_t k_len,
                                                __m512i (&partial)[kPanelRows][2]) {
  constexpr std::int64_t kBlockQuads = kBlockK / 4;
  // k_len >= 16, so the loop runs at least once; written as do-while because with a zero-trip path GCC keeps
  // a copy of the sums on the stack and stores to it every step.
  std::int64_t quad = 0;
  do {
    const std::int64_t block = quad / kBlockQuads, in_block = quad % kBlockQuads;
    const std::uint8_t* a_quads = a + block * a_block_stride + 4 * in_block;
    const std::uint8_t* b_quads = b + block * kBBlockBytes + in_block * kQuadRowBytes;
    const __m512i b0 = _mm512_load_si512(b_quads), b1 = _mm512_load_si512(b_quads + 64);
    for (int r = 0; r < kPanelRows; ++r) {
      const __m512i a_quad = broadcast_quad(a_quads + r * kBlockK);
      partial[r][0] = _mm512_dpbusd_epi32(partial[r][0], a_quad, b0);
      partial[r][1] = _mm512_dpbusd_epi32(partial[r][1], a_quad, b1);
    }
  } while (++quad < k_len / 4);
}

// partial[r] -= the corrections of the K blocks of a panel from `b` on (each covers its whole block: past the
// matrix's K, B is zero and so are the products). Always inlined, as add_products.
template <int kPanelRows>
[[gnu::always_inline]] inline void subtract_corrections(const std::uint8_t* b, std::int64_t blocks,
                                                        __m512i (&partial)[kPanelRows][2]) {
  __m512i correction0 = _mm512_setzero_si512(), correction1 = _mm512_setzero_si512();
  for (std::int64_t block = 0; block < blocks; ++block, b += kBBlockBytes) {
    correction0 = _mm512_add_epi32(correction0, _mm512_load_si512(b + kQuadBlockBytes));
    correction1 = _mm512_add_epi32(correction1, _mm512_load_si512(b + kQuadBlockBytes + 64));
  }
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
  add_products<kPanelRows>(a, a_block_stride, b, k_len, partial);
  subtract_corrections<kPanelRows>(b, (k_len + kBlockK - 1) / kBlockK, partial);
  for (int r = 0; r < kPanelRows; ++r)
    for (int j = 0; j < 2; ++j) {
      std::int32_t* row = sums + r * sums_stride + 16 * j;
      _mm512_storeu_si512(row, first ? partial[r][j] : _mm512_add_epi32(partial[r][j], _mm512_loadu_si512(row)));
    }
}

template <int kPanelRows>
void block_panel(const void* packed_a, const void* packed_b, std::int64_t kc, const float* row_scales, float* acc,
                 std::int64_t acc_stride, bool first_block) {
  const auto* b = static_cast<const std::uint8_t*>(packed_b);
  __m512i partial[kPanelRows][2];
  for (int r = 0; r < kPanelRows; ++r) partial[r][0] = partial[r][1] = _mm512_setzero_si512();
  add_products<kPanelRows>(static_cast<const std::uint8_t*>(packed_a), 0, b, kc, partial);
  subtract_corrections<kPanelRows>(b, 1, partial);
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
          pack_a_bytes<true>,
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
