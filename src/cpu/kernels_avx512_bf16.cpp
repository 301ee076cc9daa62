// The AVX-512 kernel set with BF16 dot products: E4M3 decoded to BF16 (exact) while packing, and 14x32
// micro-kernels and 8-pair dot kernels of vdpbf16ps, which adds the two exact products of a pair of K values
// into an FP32 sum. Every K block is summed in FP32 before it is scaled, as ARCHITECTURE.md (Semantics) requires.
// And the AMX-BF16 set: the same packing, dot kernels and output, with 32x32 micro-kernels on AMX tiles
// (amx_tiles.hpp). This file is compiled with the AMX flags; only those micro-kernels use tiles.
#include <immintrin.h>

#include <cstddef>
#include <utility>

#include "cpu/amx_tiles.hpp"
#include "cpu/avx512_common.hpp"
#include "cpu/dot_tile.hpp"
#include "cpu/f16.hpp"
#include "cpu/kernel_set.hpp"
#include "cpu/pack_16bit.hpp"

namespace fgemm::cpu {
namespace {

constexpr int kRows = 14;  // 28 accumulators + 2 B vectors + a broadcast fill the 32 registers
constexpr int kCols = 32;
constexpr int kMaxDirectRows = 8;  // see KernelSet::max_direct_rows

// A BF16 pair: two neighbouring values of K, the unit vdpbf16ps multiplies.
using Bf16Pair = std::uint32_t;

void pack_a(const std::uint8_t* a, std::int64_t row_stride, std::int64_t rows, std::int64_t k_len,
            std::int64_t packed_rows, void* packed) {
  auto* out = static_cast<std::uint16_t*>(packed);
  pack_a_with(a, row_stride, rows, k_len, packed_rows,
              [out](std::int64_t element, __m512i bf16) { _mm512_storeu_si512(out + element, bf16); });
}

void decode_rows(const std::uint8_t* b, std::int64_t row_stride, std::int64_t rows, std::int64_t k, void* decoded) {
  auto* out = static_cast<std::uint16_t*>(decoded);
  decode_rows_with(b, row_stride, rows, k,
                   [out](std::int64_t element, __m512i bf16) { _mm512_storeu_si512(out + element, bf16); });
}

// How far ahead in a row of B pack_b asks for data.
constexpr std::int64_t kPrefetchDistance = 256;

// Asks for the cache line kPrefetchDistance bytes ahead of offset k of a row of k_len bytes, once per line,
// if the row has one. pack_b reads 16 rows at a time, 32 bytes of each per step, and the hardware
// prefetcher keeps too few of such interleaved runs in flight (measured: packing B for M = 64 and 128 is
// 10-20% faster with it; the FP32 kernel sets, which spend less of their time packing, gain nothing).
void prefetch_ahead(const std::uint8_t* row, std::int64_t k, std::int64_t k_len) {
  if (k % 64 == 0 && k + kPrefetchDistance < k_len)
    _mm_prefetch(reinterpret_cast<const char*>(row + k + kPrefetchDistance), _MM_HINT_T0);
}

// Panel layout: [kc / 2][kCols] pairs, built from 16x16 blocks of pairs: 16 columns' runs of 32 values of
// K (16 pairs), transposed. load_run(col, k, count) returns the BF16 values [k, k + count) of column col
// (count 16 or 32; zeros after them).
template <class LoadRun>
void pack_b_transposing(std::int64_t cols, std::int64_t k_len, void* packed, LoadRun load_run) {
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
          rows[i] = col < cols ? load_run(col, k, count) : _mm512_setzero_si512();
        }
        transpose_16x16(rows);
        for (int j = 0; j < count / 2; ++j) _mm512_store_si512(out + j * kCols, rows[j]);
      }
    }
  }
}

void pack_b(const std::uint8_t* b, std::int64_t row_stride, std::int64_t cols, std::int64_t k_len, void* packed) {
  const Bf16Table table = load_bf16_table();
  pack_b_transposing(cols, k_len, packed, [&](std::int64_t col, std::int64_t k, std::int64_t count) {
    prefetch_ahead(b + col * row_stride, k, k_len);
    return decode_to_bf16(table, load_codes(b + col * row_stride + k, count));
  });
}

// The lanes of the first `count` (at most 32) 16-bit values.
__mmask32 first_values(std::int64_t count) {
  return count >= 32 ? ~__mmask32(0) : count <= 0 ? __mmask32(0) : static_cast<__mmask32>((1u << count) - 1);
}

// Pack16B of BF16 operands with vector loads and shuffles (the portable packer, one value at a time, took most
// of a large GEMM's time): a K-major B transposed as pack_b does, an MN-major one by interleaving its rows of
// K two by two into pairs.
void pack_b_bf16(const Matrix16& b, std::int64_t cols, std::int64_t k_len, std::int64_t k_valid, void* packed) {
  if (b.k_stride == 1) {
    pack_b_transposing(cols, k_len, packed, [&](std::int64_t col, std::int64_t k, std::int64_t) {
      return _mm512_maskz_loadu_epi16(first_values(k_valid - k), b.data + col * b.i_stride + k);
    });
    return;
  }
  // Pair c of the first (second) half of 32 columns: value c (16 + c) of row k, then of row k + 1.
  alignas(64) std::uint16_t first_half[32], second_half[32];
  for (int c = 0; c < 16; ++c) {
    first_half[2 * c] = c, first_half[2 * c + 1] = 32 + c;
    second_half[2 * c] = 16 + c, second_half[2 * c + 1] = 48 + c;
  }
  const __m512i first_index = _mm512_load_si512(first_half), second_index = _mm512_load_si512(second_half);
  const std::int64_t padded_cols = (cols + kCols - 1) / kCols * kCols;
  for (std::int64_t panel_start = 0; panel_start < cols; panel_start += kCols) {
    const __mmask32 columns = first_values(cols - panel_start);
    for (std::int64_t k = 0; k < k_len; k += 2) {
      const std::int64_t block_start = k / kBlockK * kBlockK;
      const std::int64_t kc = k_len - block_start < kBlockK ? k_len - block_start : kBlockK;
      Bf16Pair* out = static_cast<Bf16Pair*>(packed) + (block_start * padded_cols + panel_start * kc) / 2 +
                      (k - block_start) / 2 * kCols;
      const std::uint16_t* row = b.data + k * b.k_stride + panel_start;
      const __m512i even = _mm512_maskz_loadu_epi16(k < k_valid ? columns : 0, row);
      const __m512i odd = _mm512_maskz_loadu_epi16(k + 1 < k_valid ? columns : 0, row + b.k_stride);
      _mm512_storeu_si512(out, _mm512_permutex2var_epi16(even, first_index, odd));
      _mm512_storeu_si512(out + 16, _mm512_permutex2var_epi16(even, second_index, odd));
    }
  }
}

// The portable packers of BF16 operands, with the vector pack_b above.
constexpr Packers16 bf16_packers_of(Packers16 portable) { return {portable.pack_a, pack_b_bf16, portable.decode_rows}; }

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

// The dot kernels' lanes (see dot_tile.hpp): 32 values of K as 16 BF16 pairs (a block's rows are zero-filled
// up to kPadK = 32).
struct Bf16PairLanes : Avx512Sums {
  using Element = std::uint16_t;
  using Operand = __m512bh;
  static constexpr std::int64_t kValues = 32;
  static Operand load(const Element* values) { return (__m512bh)_mm512_loadu_si512(values); }
  static Sum multiply_add(Sum sum, Operand a, Operand b) { return _mm512_dpbf16_ps(sum, a, b); }
};

template <std::size_t... kPanelIndex>
constexpr KernelSet make_kernel_set(std::index_sequence<kPanelIndex...>) {
  return {kMaxDirectRows,
          sizeof(std::uint16_t),
          kRows,
          kCols,
          pack_a,
          pack_b,
          {multiply_panel<kPanelIndex + 1>...},
          nullptr,
          make_dot_kernels<kDotTile, Bf16PairLanes>(decode_rows),
          write_bf16_row,
          write_f16_row_portable,
          bf16_packers_of(make_packers_16bit<std::uint16_t, false, kCols>()),
          {},
          nullptr,
          nullptr};
}

template <std::size_t... kPanelIndex>
constexpr MicroKernel kAmxUnitScaleKernels[] = {amx_multiply_panel_unscaled<kPanelIndex + 1>...};

template <std::size_t... kPanelIndex>
constexpr KernelSet make_amx_kernel_set(std::index_sequence<kPanelIndex...>) {
  static_assert(kAmxCols == kCols, "the AMX kernels read the panels pack_b writes");
  return {kMaxDirectRows,
          sizeof(std::uint16_t),
          kAmxRows,
          kAmxCols,
          pack_a,
          pack_b,
          {amx_multiply_panel<kPanelIndex + 1>...},
          kAmxUnitScaleKernels<kPanelIndex...>,
          make_dot_kernels<kDotTile, Bf16PairLanes>(decode_rows),
          write_bf16_row,
          write_f16_row_portable,
          bf16_packers_of(make_packers_16bit<std::uint16_t, false, kAmxCols>()),
          {},
          configure_tiles,
          release_tiles};
}

}  // namespace

constexpr KernelSet kAvx512Bf16Kernels = make_kernel_set(std::make_index_sequence<kRows>());
constexpr KernelSet kAmxBf16Kernels = make_amx_kernel_set(std::make_index_sequence<kAmxRows>());

}  // namespace fgemm::cpu
