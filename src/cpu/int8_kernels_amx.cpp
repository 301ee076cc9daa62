// The AMX-INT8 kernel set: 32x32 micro-kernels on AMX tiles. TDPBSSD multiplies signed bytes by signed bytes
// and adds each four products into an INT32 sum (wrapping), so A and B are packed as they are: A's K blocks as
// rows of kBlockK bytes (an A tile loads 64 of them from each of 16 rows), B in the quads of
// int8_avx512_common.hpp (a B tile loads 16 rows of quads of 16 columns).
//
// The tile configuration is amx_tiles.hpp's, whose eight tiles of 16 rows of 64 bytes fit INT8 as they fit
// BF16: 0-3 the sums (row group g, column half h at tile 2g + h), 4-5 the A tiles of row groups 0 and 1, 6-7
// the B tiles of column halves 0 and 1. Tiles have 16 rows, so packed A and the sums hold whole row groups of
// 16 (Int8KernelSet::row_granule).
#include <immintrin.h>

#include <cstddef>
#include <utility>

#include "cpu/amx_tiles.hpp"
#include "cpu/avx512_common.hpp"
#include "cpu/int8_avx512_common.hpp"
#include "cpu/int8_kernel_set.hpp"

namespace fgemm::cpu {
namespace {

constexpr int kRowGroup = kAmxTileRows;
constexpr int kRows = 2 * kRowGroup;
constexpr std::int64_t kKStep = kAmxTileBytes;  // values of K in an A tile's row

void pack_b(const std::int8_t* b, std::int64_t row_stride, std::int64_t cols, std::int64_t k_len, void* packed) {
  pack_b_quads<false>(b, row_stride, cols, k_len, packed);
}

// Adds the products of one K block of kPanelRows (16 or 32) rows of packed A and a packed B panel to the sum
// tiles, over kc values of K rounded up to a step (both operands are zero past kc).
template <int kPanelRows>
void add_block_products(const std::uint8_t* a, const std::uint8_t* b, std::int64_t kc) {
  for (std::int64_t k = 0; k < kc; k += kKStep) {
    // (The tile intrinsics take literal tile numbers.)
    const std::uint8_t* b_step = b + k / 4 * kQuadRowBytes;
    _tile_loadd(6, b_step, kQuadRowBytes);
    _tile_loadd(7, b_step + 64, kQuadRowBytes);
    _tile_loadd(4, a + k, kBlockK);
    _tile_dpbssd(0, 4, 6);
    _tile_dpbssd(1, 4, 7);
    if constexpr (kPanelRows > kRowGroup) {
      _tile_loadd(5, a + kRowGroup * kBlockK + k, kBlockK);
      _tile_dpbssd(2, 5, 6);
      _tile_dpbssd(3, 5, 7);
    }
  }
}

// Int8SumKernel: the sums stay in the tiles over all of k_len.
template <int kPanelRows>
void sum_panel(const void* packed_a, std::int64_t a_block_stride, const void* packed_b, std::int64_t k_len,
               std::int32_t* sums, std::int64_t sums_stride, bool first) {
  constexpr bool kTwoGroups = kPanelRows > kRowGroup;
  const std::int64_t row_bytes = sums_stride * 4;
  if (first)
    zero_accumulator_tiles<kTwoGroups>();
  else
    load_accumulator_tiles<kTwoGroups>(sums, row_bytes);
  const auto* a = static_cast<const std::uint8_t*>(packed_a);
  const auto* b = static_cast<const std::uint8_t*>(packed_b);
  for (std::int64_t k0 = 0; k0 < k_len; k0 += kBlockK, a += a_block_stride, b += kQuadBlockBytes)
    add_block_products<kPanelRows>(a, b, k_len - k0 < kBlockK ? k_len - k0 : kBlockK);
  store_accumulator_tiles<kTwoGroups>(sums, row_bytes);
  tile_load_fence();
}

// Int8BlockKernel: one K block into the tiles, then out through memory into vector registers to be scaled.
template <int kPanelRows>
void block_panel(const void* packed_a, const void* packed_b, std::int64_t kc, const float* row_scales, float* acc,
                 std::int64_t acc_stride, bool first_block) {
  constexpr bool kTwoGroups = kPanelRows > kRowGroup;
  zero_accumulator_tiles<kTwoGroups>();
  add_block_products<kPanelRows>(static_cast<const std::uint8_t*>(packed_a), static_cast<const std::uint8_t*>(packed_b),
                                 kc);
  alignas(64) std::int32_t sums[kPanelRows][kQuadPanelCols];
  constexpr std::int64_t kRowBytes = kQuadPanelCols * 4;
  store_accumulator_tiles<kTwoGroups>(&sums[0][0], kRowBytes);
  // _tile_stored does not declare that it writes memory either: without the fence, the loads below could be
  // moved before the stores.
  tile_load_fence();
  __m512 partial[kPanelRows][2];
  for (int r = 0; r < kPanelRows; ++r)
    for (int j = 0; j < 2; ++j) partial[r][j] = _mm512_cvtepi32_ps(_mm512_load_si512(&sums[r][16 * j]));
  accumulate_scaled<kPanelRows>(partial, row_scales, acc, acc_stride, first_block);
}

// Rows r - 1 = kPanelIndex rounded up to whole row groups (the driver asks for whole groups only).
constexpr int whole_groups(std::size_t panel_index) {
  return static_cast<int>(panel_index / kRowGroup + 1) * kRowGroup;
}

template <std::size_t... kPanelIndex>
constexpr Int8KernelSet make_kernel_set(std::index_sequence<kPanelIndex...>) {
  return {1,
          kRowGroup,
          kRows,
          kQuadPanelCols,
          kQuadBlockBytes,
          pack_a_bytes<false>,
          pack_b,
          {sum_panel<whole_groups(kPanelIndex)>...},
          {block_panel<whole_groups(kPanelIndex)>...},
          scale_row,
          &kAvx512Kernels,
          configure_tiles,
          release_tiles};
}

}  // namespace

constexpr Int8KernelSet kAmxInt8Kernels = make_kernel_set(std::make_index_sequence<kRows>());

}  // namespace fgemm::cpu
