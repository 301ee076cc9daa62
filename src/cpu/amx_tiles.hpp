// AMX-BF16 micro-kernels for the blocked path, on the packed data of the AVX-512 BF16 kernel set (which
// already has the tile layouts: a packed A block is rows of kBlockK BF16 values, 256 bytes apart; a packed B
// panel is rows of 32 BF16 pairs, one pair of K values for each of 32 columns, 128 bytes apart).
//
// Tiles (one configuration for every kernel, loaded once per thread by configure_tiles):
//   0-3  sums, 16 rows x 16 FP32 columns: row group g (rows 16g...) x column half h at tile 2g + h
//   4-5  A, 16 rows x 32 BF16 values of K, for row groups 0 and 1
//   6-7  B, 16 pairs of K x 16 columns (BF16 pairs), for column halves 0 and 1
// TDPBF16PS adds the exact products of BF16 pairs into FP32 sums, so a K block's sum is taken in FP32 before it
// is scaled, as ARCHITECTURE.md (Semantics) requires. Header of internal linkage: included by the file compiled with
// AMX flags.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "cpu/avx512_common.hpp"
#include "cpu/kernel_set.hpp"

namespace fgemm::cpu {
namespace {

constexpr int kAmxTileRows = 16;
constexpr int kAmxRows = 2 * kAmxTileRows;
constexpr int kAmxCols = 32;
constexpr int kAmxTileBytes = 64;                           // one row of every tile
constexpr std::int64_t kAmxARowBytes = kBlockK * 2;          // packed A: a row of a K block in BF16
constexpr std::int64_t kAmxBRowBytes = kAmxCols * 4;         // packed B: a row of 32 BF16 pairs
constexpr std::int64_t kAmxKStep = kAmxTileBytes / 2;        // K values of one A tile row

void configure_tiles() {
  // The 64-byte tile configuration: palette 1, then the bytes per row of tiles 0-15 (16-bit each, from
  // byte 16) and their rows (8-bit each, from byte 48).
  alignas(64) std::uint8_t config[64] = {};
  config[0] = 1;
  for (int tile = 0; tile < 8; ++tile) {
    const std::uint16_t row_bytes = kAmxTileBytes;
    std::memcpy(config + 16 + 2 * tile, &row_bytes, sizeof(row_bytes));
    config[48 + tile] = kAmxTileRows;
  }
  // Through asm with the configuration as a memory input, not _tile_loadconfig: GCC 12 does not count that
  // intrinsic as a read of its operand, drops the stores above as dead, and loads a configuration of empty
  // tiles, on which the first tile instruction raises #UD (SIGILL).
  asm volatile("ldtilecfg %0" : : "m"(config));
}

// GCC's _tile_loadd is inline assembly that does not declare that it reads memory: without a compiler barrier
// on each side of the loads, the stores that fill what a tile loads (the padded copies, the sums in acc) could
// be dropped or moved past them.
void tile_load_fence() { asm volatile("" ::: "memory"); }

// A panel's accumulator tiles, of 4-byte sums (FP32 or INT32): tiles 0 and 1 hold rows 0-15 (columns 0-15 and
// 16-31), tiles 2 and 3 rows 16-31 where the panel has two row groups; in memory at `sums`, rows `row_bytes`
// apart.
template <bool kTwoGroups>
void zero_accumulator_tiles() {
  _tile_zero(0);
  _tile_zero(1);
  if constexpr (kTwoGroups) {
    _tile_zero(2);
    _tile_zero(3);
  }
}

template <bool kTwoGroups>
void load_accumulator_tiles(const void* sums, std::int64_t row_bytes) {
  const auto* first = static_cast<const std::uint8_t*>(sums);
  const std::uint8_t* second = first + kAmxTileRows * row_bytes;
  tile_load_fence();
  _tile_loadd(0, first, row_bytes);
  _tile_loadd(1, first + kAmxTileBytes, row_bytes);
  if constexpr (kTwoGroups) {
    _tile_loadd(2, second, row_bytes);
    _tile_loadd(3, second + kAmxTileBytes, row_bytes);
  }
  tile_load_fence();
}

template <bool kTwoGroups>
void store_accumulator_tiles(void* sums, std::int64_t row_bytes) {
  auto* first = static_cast<std::uint8_t*>(sums);
  std::uint8_t* second = first + kAmxTileRows * row_bytes;
  _tile_stored(0, first, row_bytes);
  _tile_stored(1, first + kAmxTileBytes, row_bytes);
  if constexpr (kTwoGroups) {
    _tile_stored(2, second, row_bytes);
    _tile_stored(3, second + kAmxTileBytes, row_bytes);
  }
}

// Gives the tile state back, so that the operating system need not save it at each context switch.
void release_tiles() { _tile_release(); }

// Where the A tile of one row group is loaded from (with a row stride): packed A itself when the group has
// all 16 rows, else a copy with its rows past `rows` zero (every tile has 16 rows).
struct TileSource {
  const std::uint8_t* data;
  std::int64_t row_bytes;
};

inline TileSource a_tile(const std::uint8_t* a, int rows, std::int64_t k, std::uint8_t (&padded)[kAmxTileRows][kAmxTileBytes]) {
  if (rows == kAmxTileRows) return {a + k * 2, kAmxARowBytes};
  std::memset(padded, 0, sizeof(padded));
  for (int r = 0; r < rows; ++r) std::memcpy(padded[r], a + r * kAmxARowBytes + k * 2, kAmxTileBytes);
  return {&padded[0][0], kAmxTileBytes};
}

// Adds the products of kPanelRows <= 32 rows of packed A and a packed B panel over kc values of K to the sum
// tiles 0-3 (0-1 for up to 16 rows).
template <int kPanelRows>
void amx_add_products(const std::uint8_t* a, const std::uint8_t* b, std::int64_t kc) {
  constexpr bool kTwoGroups = kPanelRows > kAmxTileRows;
  constexpr int kSecondRows = kTwoGroups ? kPanelRows - kAmxTileRows : 0;
  alignas(64) std::uint8_t padded_a[2][kAmxTileRows][kAmxTileBytes];  // for each row group
  alignas(64) std::uint8_t padded_b[kAmxTileRows][kAmxBRowBytes];
  for (std::int64_t k = 0; k < kc; k += kAmxKStep) {
    // B: 16 pairs of K from the panel, or, for a last step of 16 values of K (K is a multiple of 16 only),
    // its 8 pairs followed by zeros: the panel ends there. (A is zero past kc already: kPadK.)
    const std::uint8_t* b_rows = b + k / 2 * kAmxBRowBytes;
    if (kc - k < kAmxKStep) {
      std::memset(padded_b, 0, sizeof(padded_b));
      std::memcpy(padded_b, b_rows, (kc - k) / 2 * kAmxBRowBytes);
      b_rows = &padded_b[0][0];
    }
    const TileSource first = a_tile(a, kTwoGroups ? kAmxTileRows : kPanelRows, k, padded_a[0]);
    tile_load_fence();
    _tile_loadd(6, b_rows, kAmxBRowBytes);
    _tile_loadd(7, b_rows + kAmxTileBytes, kAmxBRowBytes);
    // (The tile intrinsics take literal tile numbers.)
    _tile_loadd(4, first.data, first.row_bytes);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    if constexpr (kTwoGroups) {
      const TileSource second = a_tile(a + kAmxTileRows * kAmxARowBytes, kSecondRows, k, padded_a[1]);
      tile_load_fence();
      _tile_loadd(5, second.data, second.row_bytes);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
    tile_load_fence();
  }
}

// MicroKernel (kernel_set.hpp) for kPanelRows <= 32 rows and 32 columns.
template <int kPanelRows>
void amx_multiply_panel(const void* packed_a, const void* packed_b, std::int64_t kc, const float* row_scales,
                        float* acc, std::int64_t acc_stride, bool first_block) {
  constexpr bool kTwoGroups = kPanelRows > kAmxTileRows;
  zero_accumulator_tiles<kTwoGroups>();
  amx_add_products<kPanelRows>(static_cast<const std::uint8_t*>(packed_a), static_cast<const std::uint8_t*>(packed_b),
                               kc);
  alignas(64) float sums[kAmxRows][kAmxCols];
  store_accumulator_tiles<kTwoGroups>(&sums[0][0], kAmxCols * 4);
  __m512 partial[kPanelRows][2];
  for (int r = 0; r < kPanelRows; ++r)
    for (int j = 0; j < 2; ++j) partial[r][j] = _mm512_load_ps(&sums[r][16 * j]);
  accumulate_scaled<kPanelRows>(partial, row_scales, acc, acc_stride, first_block);
}

// MicroKernel for row scales that are all 1 (KernelSet::unit_scale_micro_kernels), for whole row groups (16 or
// 32 rows): the sums go from acc into the tiles and back, without the scaling's pass through vector registers
// (a fifth of the time of a large BF16 GEMM). Partial groups take amx_multiply_panel: a tile loads and stores
// all of its 16 rows.
template <int kPanelRows>
void amx_multiply_panel_unscaled(const void* packed_a, const void* packed_b, std::int64_t kc, const float* row_scales,
                                 float* acc, std::int64_t acc_stride, bool first_block) {
  if constexpr (kPanelRows % kAmxTileRows != 0) {
    amx_multiply_panel<kPanelRows>(packed_a, packed_b, kc, row_scales, acc, acc_stride, first_block);
  } else {
    constexpr bool kTwoGroups = kPanelRows > kAmxTileRows;
    const std::int64_t row_bytes = acc_stride * 4;
    if (first_block)
      zero_accumulator_tiles<kTwoGroups>();
    else
      load_accumulator_tiles<kTwoGroups>(acc, row_bytes);
    amx_add_products<kPanelRows>(static_cast<const std::uint8_t*>(packed_a),
                                 static_cast<const std::uint8_t*>(packed_b), kc);
    store_accumulator_tiles<kTwoGroups>(acc, row_bytes);
  }
}

}  // namespace
}  // namespace fgemm::cpu
