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

// The promotion keeps two partial accumulators beside the FP32 one: warpgroups of at most 128 columns.
constexpr int kMaxWarpgroupN = 128;

}  // namespace fgemm::sm90::row_blocks
