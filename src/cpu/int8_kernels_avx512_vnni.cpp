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

// 14 sums, 7 rows of 32 columns: with them the K loop issues vpdpbusd at the core's peak (measured once a cycle,
// 217 G products a second, on the core of an earlier machine; twice a cycle, 8.2 G instructions a second, on a Zen 5
// core), so more rows, which would use each vector of B more often, gain nothing.
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

// sums += the products of four unsigned bytes by four signed bytes in each 32-bit lane: vpdpbusd, written as
// assembly with the sums an in-out operand. Through the intrinsic, GCC 12 copied each of the 14 sums to another
// register and back around every instruction of the K loop, which then ran at 72% of vpdpbusd's peak on a Zen 5
// core (6.0 of 8.2 G instructions a second, the panel in L1); so, at the peak.
[[gnu::always_inline]] inline void add_quad_products(__m512i& sums, __m512i unsigned_quads, __m512i signed_quads) {
  asm("vpdpbusd %2, %1, %0" : "+v"(sums) : "v"(unsigned_quads), "v"(signed_quads));
}

// A panel's INT32 sums, kPanelRows rows of 32 columns: a row's two vectors, then the other rows'. A nest of
// members, each reached by name, rather than an array: GCC keeps an array indexed in a loop over the rows in
// memory (stored every step of the K loop), and these members in registers.
template <int kPanelRows>
struct PanelSums {
  __m512i left, right;  // columns 0-15 and 16-31
  PanelSums<kPanelRows - 1> rest;
};
template <>
struct PanelSums<0> {};

template <int kPanelRows>
[[gnu::always_inline]] inline void set_zero(PanelSums<kPanelRows>& sums) {
  if constexpr (kPanelRows > 0) {
    sums.left = sums.right = _mm512_setzero_si512();
    set_zero(sums.rest);
  }
}

// sums += each row's quad (rows kBlockK bytes apart from a_quads) times the panel's quad of columns b0, b1.
template <int kPanelRows>
[[gnu::always_inline]] inline void add_quad(PanelSums<kPanelRows>& sums, const std::uint8_t* a_quads, __m512i b0,
                                            __m512i b1) {
  if constexpr (kPanelRows > 0) {
    const __m512i a_quad = broadcast_quad(a_quads);
    add_quad_products(sums.left, a_quad, b0);
    add_quad_products(sums.right, a_quad, b1);
    add_quad(sums.rest, a_quads + kBlockK, b0, b1);
  }
}

template <int kPanelRows>
[[gnu::always_inline]] inline void subtract(PanelSums<kPanelRows>& sums, __m512i left, __m512i right) {
  if constexpr (kPanelRows > 0) {
    sums.left = _mm512_sub_epi32(sums.left, left);
    sums.right = _mm512_sub_epi32(sums.right, right);
    subtract(sums.rest, left, right);
  }
}

// Row r of sums into `rows` r (`first`) or added to it; rows `stride` INT32 apart.
template <int kPanelRows>
[[gnu::always_inline]] inline void store(const PanelSums<kPanelRows>& sums, std::int32_t* rows, std::int64_t stride,
                                         bool first) {
  if constexpr (kPanelRows > 0) {
    _mm512_storeu_si512(rows, first ? sums.left : _mm512_add_epi32(sums.left, _mm512_loadu_si512(rows)));
    _mm512_storeu_si512(rows + 16, first ? sums.right : _mm512_add_epi32(sums.right, _mm512_loadu_si512(rows + 16)));
    store(sums.rest, rows + stride, stride, first);
  }
}

// Row r of sums as FP32 into values[r].
template <int kPanelRows>
[[gnu::always_inline]] inline void convert(const PanelSums<kPanelRows>& sums, __m512 (*values)[2]) {
  if constexpr (kPanelRows > 0) {
    values[0][0] = _mm512_cvtepi32_ps(sums.left);
    values[0][1] = _mm512_cvtepi32_ps(sums.right);
    convert(sums.rest, values + 1);
  }
}

// sums += the products of packed A's rows and the panel's 32 columns over k_len values of K (a multiple of 16,
// from a K block boundary; A's K blocks a_block_stride bytes apart): one loop over the quads, whichever block
// they lie in.
template <int kPanelRows>
[[gnu::always_inline]] inline void add_products(const std::uint8_t* a, std::int64_t a_block_stride,
                                                const std::uint8_t* b, std::int64_t k_len,
                                                PanelSums<kPanelRows>& sums) {
  constexpr std::int64_t kBlockQuads = kBlockK / 4;
  // k_len >= 16, so the loop runs at least once; written as do-while because with a zero-trip path GCC keeps
  // a copy of the sums on the stack and stores to it every step.
  std::int64_t quad = 0;
  do {
    const std::int64_t block = quad / kBlockQuads, in_block = quad % kBlockQuads;
    const std::uint8_t* b_quads = b + block * kBBlockBytes + in_block * kQuadRowBytes;
    add_quad(sums, a + block * a_block_stride + 4 * in_block, _mm512_load_si512(b_quads),
             _mm512_load_si512(b_quads + 64));
  } while (++quad < k_len / 4);
}

// The corrections of the K blocks of a panel from `b` on, columns 0-15 and 16-31 (each covers its whole block:
// past the matrix's K, B is zero and so are the products). Read before the K loop: with a loop after it, GCC
// again copies the sums between registers around each vpdpbusd.
struct Corrections {
  __m512i left, right;
};
[[gnu::always_inline]] inline Corrections corrections(const std::uint8_t* b, std::int64_t blocks) {
  Corrections sum{_mm512_setzero_si512(), _mm512_setzero_si512()};
  for (std::int64_t block = 0; block < blocks; ++block, b += kBBlockBytes) {
    sum.left = _mm512_add_epi32(sum.left, _mm512_load_si512(b + kQuadBlockBytes));
    sum.right = _mm512_add_epi32(sum.right, _mm512_load_si512(b + kQuadBlockBytes + 64));
  }
  return sum;
}

template <int kPanelRows>
void sum_panel(const void* packed_a, std::int64_t a_block_stride, const void* packed_b, std::int64_t k_len,
               std::int32_t* sums, std::int64_t sums_stride, bool first) {
  const auto* b = static_cast<const std::uint8_t*>(packed_b);
  const Corrections correction = corrections(b, (k_len + kBlockK - 1) / kBlockK);
  PanelSums<kPanelRows> partial;
  set_zero(partial);
  add_products(static_cast<const std::uint8_t*>(packed_a), a_block_stride, b, k_len, partial);
  subtract(partial, correction.left, correction.right);
  store(partial, sums, sums_stride, first);
}

template <int kPanelRows>
void block_panel(const void* packed_a, const void* packed_b, std::int64_t kc, const float* row_scales, float* acc,
                 std::int64_t acc_stride, bool first_block) {
  const auto* b = static_cast<const std::uint8_t*>(packed_b);
  const Corrections correction = corrections(b, 1);
  PanelSums<kPanelRows> partial;
  set_zero(partial);
  add_products(static_cast<const std::uint8_t*>(packed_a), 0, b, kc, partial);
  subtract(partial, correction.left, correction.right);
  __m512 sums[kPanelRows][2];
  convert(partial, sums);
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
