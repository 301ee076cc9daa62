// How the FP8 1x128 / 128x128 recipe uses a tile's registers and shared memory, for the kernel's per-K-block
// math (math_block_scaled.cuh) and for the host's candidates and cost model: compiled by both.
#pragma once

#include "fgemm/sm90/tile_config.cuh"

namespace fgemm::sm90::block_scaled {

// A stage holds, beside A and B, the scales of A for the tile's rows (FP32).
constexpr int stage_extra_bytes(const TileConfig& tile) { return tile.block_m * 4; }

// A second partial accumulator lets a warpgroup promote one K block while its next block's MMAs run: where
// three accumulators of warpgroup_n / 2 registers fit the math threads' registers (232 with two math
// warpgroups, 160 with three) beside addresses, scales and loop state.
constexpr bool two_partials(const TileConfig& tile) {
  return tile.warpgroup_n() <= (tile.num_math_warpgroups() == 3 ? 64 : 128);
}

// A warpgroup of 256 columns (BLOCK_M 128 x BLOCK_N 256) multiplies them in two halves of 128 through one
// partial accumulator: 128 + 64 registers. Against 128 x 128 tiles, the TMA traffic into shared memory per MMA
// falls by a quarter (the wgmma reads shared memory too, and both compete for its bandwidth).
constexpr int column_halves(const TileConfig& tile) { return tile.warpgroup_n() > 160 ? 2 : 1; }

// The N of each wgmma.
constexpr int mma_n(const TileConfig& tile) { return tile.warpgroup_n() / column_halves(tile); }

// The promotion has two sfb values per warpgroup: its columns must never touch three 128-column blocks of B's
// scales, wherever the tile starts.
constexpr bool spans_at_most_two_scale_blocks(const TileConfig& tile) {
  for (int n_block = 0; n_block < 128; ++n_block)
    for (int wg_col = 0; wg_col < tile.warpgroup_cols(); ++wg_col)
      if ((n_block * tile.block_n + wg_col * tile.warpgroup_n()) % 128 + tile.warpgroup_n() > 256) return false;
  return true;
}

}  // namespace fgemm::sm90::block_scaled
