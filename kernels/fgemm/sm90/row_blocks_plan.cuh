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
// one K block while its next block's MMAs run, so its own MMAs hide its promotion. Three (BLOCK_M 192, 152 or 160
// registers each) have room for one: a warpgroup's promotion runs while the other two warpgroups' MMAs keep the
// tensor cores busy.
constexpr bool two_partials(const TileConfig& tile) { return tile.num_math_warpgroups() == 2; }

// The widest warpgroup whose FP32 accumulators and partials fit the math threads' registers, with either schedule.
constexpr int kMaxWarpgroupN = 128;

// Three math warpgroups of 128 columns each hold 128 FP32 accumulators and a partial of 64 per thread.
constexpr bool three_of_128_columns(const TileConfig& tile) {
  return !two_partials(tile) && tile.warpgroup_n() == kMaxWarpgroupN;
}

// Those take 160 registers and leave the producer 32, which its TMA thread and the helper warp that copies this
// recipe's scales (a loop of one cp.async) fit; at 152, ptxas spilled 36-92 bytes of their K loop. Narrower tiles
// keep the split most kernels take: 192 x 96 spilled 12 bytes at 160 registers and none at 152.
constexpr RegisterSplit register_split(const TileConfig& tile) {
  return three_of_128_columns(tile) ? RegisterSplit{32, 160} : tile.register_split();
}

}  // namespace fgemm::sm90::row_blocks
