// The tiling of one sm90 GEMM kernel and everything that follows from it: the warpgroups' split of a tile,
// the TMA boxes, D's staging for the TMA store, shared memory. Compiled by NVRTC (each kernel's
// configuration is a constexpr TileConfig) and by the host (the heuristics and the launcher), so the two
// compute every derived number with the same code.
#pragma once

#include "fgemm/common.cuh"

namespace fgemm::sm90 {

// How setmaxnreg divides an SM's 64 K registers between a CTA's producer warpgroup, which needs few, and its math
// warpgroups, which hold the accumulators. Each per-K-block math policy chooses its split (kRegisters).
struct RegisterSplit {
  int producer;
  int math;
};

struct TileConfig {
  int block_m = 128;
  int block_n = 128;
  int num_stages = 4;
  // Clusters of two CTAs: side by side along M they share (multicast) B, along N they share A.
  int cluster_m = 1;
  int cluster_n = 1;
  int output_bytes = 2;     // of D: 2 (BF16 or FP16) or 4 (FP32)
  int operand_bytes = 1;    // of A and B: 1 (FP8) or 2 (BF16, FP16)
  bool output_f16 = false;  // a 16-bit D is FP16 rather than BF16
  // Split-K: this many CTAs of a cluster compute one tile together, each over its 1/split_k of the K blocks,
  // and reduce their sums through distributed shared memory (split_k_reduction.cuh). Never with multicast.
  int split_k = 1;
  // A C of its own (not D): the chunks of C that each math warpgroup's ring holds (epilogue_c_ring.cuh), each
  // 64 rows of one 128-byte swizzle row of C; 0 without such a C.
  int c_slots = 0;
  int c_bytes = 4;  // of C: 4 (FP32) or 2 (D's 16-bit type, 64 columns to a chunk)
  // Rows of A a stage loads where the problem has fewer rows than a tile (the normal layout, A K-major, no
  // multicast): 8, 16 or 32, or 0 for all of BLOCK_M. The TMA then brings no rows of zeros past the end of A,
  // which cost an SM as much of its load bandwidth as rows of data. The wgmmas still multiply 64 rows per
  // warpgroup: the stage's other rows hold whatever they held, and the accumulator rows they make are never
  // stored.
  int a_rows = 0;
  // The two math warpgroups of a 64-row tile take alternate K blocks over all of its columns, rather than half of
  // its columns over every K block, and add their sums before the epilogue (alternating_k_blocks.cuh). On the
  // narrow tiles of decode shapes a K block's chain in a warpgroup (its stage's wait, its MMAs' latency, the
  // promotion, the release) bounds the kernel, and each warpgroup then runs half as many.
  bool alternate_k_blocks = false;
  // FP32 D staged one column half at a time although its warpgroups are narrower than the staging's rule asks
  // (staging_passes): the host's choice where the shared memory this frees gives a one-wave tile one more stage.
  bool staged_in_halves = false;

  // One K block is one 128-byte swizzle row of A and B.
  constexpr int block_k() const { return 128 / operand_bytes; }

  // The math warpgroups split the tile: three along M (BLOCK_M 192), two along M (128) or two along N (64), or
  // take alternate K blocks of a 64-row tile.
  constexpr int num_math_warpgroups() const { return block_m == 192 ? 3 : 2; }
  constexpr int num_threads() const { return 128 * (num_math_warpgroups() + 1); }
  constexpr int warpgroup_rows() const { return block_m / 64; }
  constexpr int warpgroup_cols() const {
    return alternate_k_blocks ? 1 : num_math_warpgroups() / warpgroup_rows();
  }
  // The warpgroups that multiply each K block (and give its stage back), and those that store a part of D.
  constexpr int warpgroups_per_k_block() const { return alternate_k_blocks ? 1 : num_math_warpgroups(); }
  constexpr int storing_warpgroups() const { return alternate_k_blocks ? 1 : num_math_warpgroups(); }
  constexpr int warpgroup_n() const { return block_n / warpgroup_cols(); }
  // The split most kernels take: 128 x 40 + 256 x 232 with two math warpgroups, 128 x 40 + 384 x 152 with three.
  // The producer's 40 leave its helper warp, which copies scales where the TMA cannot load them, room to spare.
  constexpr RegisterSplit register_split() const {
    return num_math_warpgroups() == 3 ? RegisterSplit{40, 152} : RegisterSplit{40, 232};
  }

  // CTAs of a cluster sharing an operand by multicast, and CTAs of a cluster in all.
  constexpr int multicast_size() const { return cluster_m * cluster_n; }
  constexpr int cluster_size() const { return multicast_size() * split_k; }
  // Rows of the TMA boxes of A and B: an operand shared by the cluster is loaded in one slice per CTA.
  constexpr int slice_rows_a() const {
    return a_rows > 0 ? a_rows : cluster_n > 1 ? block_m / multicast_size() : block_m;
  }
  // Rows of A a stage loads (all of its slices).
  constexpr int loaded_rows_a() const { return a_rows > 0 ? a_rows : block_m; }
  constexpr int slice_rows_b() const { return cluster_m > 1 ? block_n / multicast_size() : block_n; }

  // An MN-major operand (a 16-bit A stored [K, M] or B [K, N], operand_mn_major.cuh) is loaded in boxes of one K
  // block by a run of M or N that is one swizzle row: 64 elements (the 128-byte swizzle) where every extent the
  // boxes tile is a multiple of 64, else 32 (the 64-byte swizzle), so that tiles and warpgroups of any multiple of
  // 32 rows or columns load and multiply whole boxes. A's extents are its multicast slice and the warpgroups' 64
  // rows; B's its slice and a warpgroup's columns.
  constexpr int mn_major_run_a() const { return slice_rows_a() % 64 == 0 ? 64 : 32; }
  constexpr int mn_major_run_b() const { return slice_rows_b() % 64 == 0 && warpgroup_n() % 64 == 0 ? 64 : 32; }

  // Each warpgroup stages its part of D in shared memory for the TMA store: all its columns at once, or, where
  // a warpgroup wider than 160 columns has a fourth stage, FP32 output or a ring of C smaller than the whole
  // staging (which would leave room for two stages only), or where the host asks it (staged_in_halves), one
  // column half at a time, if a half is whole 8-column groups of the accumulators (and so whole 16-byte units of D).
  constexpr int staging_passes() const {
    const bool halves = (warpgroup_n() > 160 || staged_in_halves) && warpgroup_n() % 16 == 0;
    const bool ring_holds_staging = c_slots * kCChunkBytes >= 64 * warpgroup_n() * output_bytes;
    return halves && !ring_holds_staging && (num_stages >= 4 || output_bytes == 4 || c_slots > 0) ? 2 : 1;
  }
  constexpr int staged_cols() const { return warpgroup_n() / staging_passes(); }
  // Width of the TMA-store swizzle of D: the widest of 128/64/32 bytes dividing a staged row, or 0.
  constexpr int swizzle_d_bytes() const {
    return staged_cols() * output_bytes % 128 == 0  ? 128
           : staged_cols() * output_bytes % 64 == 0 ? 64
           : staged_cols() * output_bytes % 32 == 0 ? 32
                                                    : 0;
  }
  // A staging pass is stored in chunks of this many bytes per row, one TMA store each.
  constexpr int chunk_bytes() const { return swizzle_d_bytes() ? swizzle_d_bytes() : staged_cols() * output_bytes; }
  constexpr int smem_d_per_warpgroup() const { return 64 * staged_cols() * output_bytes; }

  // C's ring: a warpgroup's columns of C are chunks of one 128-byte swizzled TMA box, 64 rows of 32 FP32 or 64
  // 16-bit columns.
  static constexpr int kCChunkBytes = 64 * 128;
  constexpr int c_chunk_cols() const { return 128 / c_bytes; }
  constexpr int c_chunks() const { return ceil_div(warpgroup_n(), c_chunk_cols()); }

  // A warpgroup's memory for its epilogue: D's staging and C's ring share it, as the epilogue has read every
  // chunk of C before it stages D, and the TMA store has read the staging before the next tile's chunks land
  // (epilogue_c_ring.cuh).
  constexpr int epilogue_bytes_per_warpgroup() const {
    const int ring = c_slots * kCChunkBytes;
    return ring > smem_d_per_warpgroup() ? ring : smem_d_per_warpgroup();
  }

  // The tile's sums that another party adds: split-K's slots, where a CTA receives its peers' FP32 sums of the
  // math warps it owns (every split_k-th), each warp's 16 rows from each of the split_k - 1 peers, and two barriers
  // (the peers' sums have landed; the owners are done reading this CTA's); alternate K blocks' sums of the second
  // math warpgroup, which the first reads. The slots take at most the tile's sums (its every warp once), which is
  // what split-K's stage counts were measured with.
  constexpr int split_k_slots() const { return ceil_div(num_math_warpgroups() * 4, split_k) * (split_k - 1); }
  constexpr bool split_k_slots_fit() const { return split_k_slots() <= num_math_warpgroups() * 4; }
  constexpr int sums_bytes() const { return split_k > 1 || alternate_k_blocks ? block_m * block_n * 4 : 0; }
  constexpr int split_k_barrier_bytes() const { return split_k > 1 ? 2 * 8 : 0; }

  // Shared memory: each storing warpgroup's epilogue memory (D's staging and C's ring), then per stage a K block of
  // A and of B and `stage_extra_bytes` that the per-K-block math loads with them (FP8: the scales of A), the sums
  // (split-K's or alternate K blocks'), then a full and an empty barrier per stage, a barrier per chunk of C's
  // rings, and split-K's.
  constexpr int stage_bytes(int stage_extra_bytes) const {
    return (block_m + block_n) * block_k() * operand_bytes + stage_extra_bytes;
  }
  constexpr int smem_bytes(int stage_extra_bytes) const {
    return storing_warpgroups() * epilogue_bytes_per_warpgroup() + num_stages * stage_bytes(stage_extra_bytes) +
           sums_bytes() + num_stages * 2 * 8 + storing_warpgroups() * c_slots * 8 + split_k_barrier_bytes();
  }
};

}  // namespace fgemm::sm90
