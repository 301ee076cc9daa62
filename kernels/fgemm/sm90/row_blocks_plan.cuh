// How the FP8 1D1D recipe (A and B both scaled per 1 x 128 block along K: weight gradients) uses a stage's
// shared memory, for the kernel's per-K-block math (math_row_blocks.cuh) and the host's configurations:
// compiled by both.
#pragma once

#include "fgemm/sm90/tile_config.cuh"

namespace fgemm::sm90::row_blocks {

// Each TMA destination starts on a 128-byte boundary.
constexpr int align_128(int bytes) { return (bytes + 127) / 128 * 128; }

// A stage holds, beside A and B, the K block's scales of the tile's rows of A, then of its rows of B (FP32).
constexpr int sfa_bytes(const TileConfig& tile) { return align_128(tile.block_m * 4); }
constexpr int stage_extra_bytes(const TileConfig& tile) { return sfa_bytes(tile) + align_128(tile.block_n * 4); }

// Two math warpgroups (232 registers each) keep two partial accumulators beside the FP32 one: a warpgroup promotes
// one K block while its next block's MMAs run, so its own MMAs hide its promotion. Three (BLOCK_M 192, 152
// registers each) have room for one: a warpgroup's promotion runs while the other two warpgroups' MMAs keep the
// tensor cores busy.
constexpr bool two_partials(const TileConfig& tile) { return tile.num_math_warpgroups() == 2; }

// The widest warpgroup whose FP32 accumulators and partials fit the math threads' registers: 128 columns with
// two math warpgroups, 96 with three (at 128 columns ptxas spilled 36-92 bytes in the K loop).
constexpr int max_warpgroup_n(const TileConfig& tile) { return two_partials(tile) ? 128 : 96; }

}  // namespace fgemm::sm90::row_blocks
