// The compile-time configuration every part of the sm90 GEMM kernel reads: the tiling (TileConfig, shared
// with the host) and the problem's fixed dimensions and layout, as constants.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/sm90/scheduler.cuh"
#include "fgemm/sm90/tile_config.cuh"

namespace fgemm::sm90 {

// kTile_ is a type with a `static constexpr TileConfig value` (C++17 takes no class-type template values).
// kAddToD_: C is D itself (accumulation in place, FP32), and the epilogue adds the tile to what D holds as it
// stores it, rather than reading C. kPackedD_ (the contiguous psum layout): D holds the experts' rows without their
// padding, expert g's from row d_row_starts[g] on.
template <class kTile_, uint32_t kShapeN_, uint32_t kShapeK_, Layout kLayout_, uint32_t kBandM_, bool kAddToD_,
          bool kPackedD_ = false>
struct GemmConfig {
  static constexpr TileConfig kTile = kTile_::value;
  static constexpr uint32_t kBlockM = kTile.block_m;
  static constexpr uint32_t kBlockN = kTile.block_n;
  static constexpr uint32_t kBlockK = kTile.block_k();
  static constexpr uint32_t kNumStages = kTile.num_stages;
  static constexpr uint32_t kShapeN = kShapeN_;
  static constexpr uint32_t kShapeK = kShapeK_;
  static constexpr Layout kLayout = kLayout_;
  static constexpr uint32_t kBandM = kBandM_;  // tile rows per rasterization band (L2 reuse)

  // A cluster of kClusterM x kClusterN CTAs: tiles side by side along M share B, along N share A. Each CTA
  // loads a 1/kMulticastSize slice of the shared operand and multicasts it to the cluster.
  static constexpr uint32_t kClusterM = kTile.cluster_m;
  static constexpr uint32_t kClusterN = kTile.cluster_n;
  static constexpr uint32_t kMulticastSize = kTile.multicast_size();
  // Split-K: kSplitK CTAs of a cluster share each tile's K blocks (split_k_reduction.cuh).
  static constexpr uint32_t kSplitK = kTile.split_k;
  static constexpr uint32_t kClusterSize = kTile.cluster_size();
  static constexpr uint32_t kSliceRowsA = kTile.slice_rows_a();
  static constexpr uint32_t kSliceRowsB = kTile.slice_rows_b();

  static constexpr uint32_t kNumMathWarpgroups = kTile.num_math_warpgroups();
  static constexpr uint32_t kWarpgroupRows = kTile.warpgroup_rows();
  static constexpr uint32_t kWarpgroupCols = kTile.warpgroup_cols();
  static constexpr uint32_t kWarpgroupN = kTile.warpgroup_n();
  static constexpr uint32_t kNumThreads = kTile.num_threads();
  // The two math warpgroups take alternate K blocks of the tile (alternating_k_blocks.cuh).
  static constexpr bool kAlternateKBlocks = kTile.alternate_k_blocks;
  static constexpr uint32_t kWarpgroupsPerKBlock = kTile.warpgroups_per_k_block();
  static constexpr uint32_t kStoringWarpgroups = kTile.storing_warpgroups();
  // A math warpgroup multiplies every kWarpgroupKStride-th K block of a tile.
  static constexpr uint32_t kWarpgroupKStride = kAlternateKBlocks ? 2 : 1;
  // The K blocks of the problem, and those each CTA multiplies per tile (all of them, or its split's share).
  static constexpr uint32_t kProblemKBlocks = ceil_div(kShapeK, kBlockK);
  static constexpr uint32_t kNumKBlocks = kProblemKBlocks / kSplitK;

  static constexpr bool kOutputF32 = kTile.output_bytes == 4;
  static constexpr bool kOutputF16 = kTile.output_bytes == 2 && kTile.output_f16;
  static constexpr uint32_t kOutputBytes = kTile.output_bytes;
  static constexpr bool kAddToD = kAddToD_;
  static constexpr bool kPackedD = kPackedD_;
  static constexpr uint32_t kSwizzleDBytes = kTile.swizzle_d_bytes();  // 128, 64, 32, or 0 for none
  static constexpr uint32_t kStagingPasses = kTile.staging_passes();
  static constexpr uint32_t kStagedCols = kTile.staged_cols();
  // A pass is staged in chunks of kChunkCols columns, one TMA store each.
  static constexpr uint32_t kChunkBytes = kTile.chunk_bytes();
  static constexpr uint32_t kChunkCols = kChunkBytes / kOutputBytes;
  static constexpr uint32_t kNumChunks = kStagedCols / kChunkCols;
  // A warpgroup's shared memory for D's staging and C's ring, which share it.
  static constexpr uint32_t kEpilogueBytesPerWarpgroup = kTile.epilogue_bytes_per_warpgroup();
  static constexpr uint32_t kSmemA = kBlockM * kBlockK * kTile.operand_bytes;
  static constexpr uint32_t kSmemB = kBlockN * kBlockK * kTile.operand_bytes;
  // The rows of A a stage loads, and the bytes the TMA brings a stage.
  static constexpr uint32_t kLoadedRowsA = kTile.loaded_rows_a();
  static constexpr uint32_t kStageLoadBytes = (kLoadedRowsA + kBlockN) * kBlockK * kTile.operand_bytes;
  // C of its own: the chunks of a warpgroup's columns of C, and those its ring holds (epilogue_c_ring.cuh).
  static constexpr uint32_t kCChunks = kTile.c_chunks();
  static constexpr uint32_t kCSlots = kTile.c_slots;
  static constexpr uint32_t kCBytes = kTile.c_bytes;
  static constexpr uint32_t kCChunkCols = kTile.c_chunk_cols();
  static constexpr uint32_t kSumsBytes = kTile.sums_bytes();
  // TMA stores clip at the edge of D in 16-byte units: where a row of D does not end on one, the tile at
  // that edge is stored element by element.
  static constexpr bool kRaggedN = kShapeN * kOutputBytes % 16 != 0;

  static_assert(!kAddToD || kOutputF32, "C, which may be D, is FP32");
  static_assert(kCSlots <= kCChunks && !(kAddToD && kCSlots > 0), "a ring of C, which is not D, holds its chunks");
  static_assert(kCBytes == 4 || (kCBytes == 2 && kOutputBytes == 2), "C is FP32 or of D's 16-bit type");
  static_assert(kBlockM == 64 || kBlockM == 128 || kBlockM == 192, "BLOCK_M is 64, 128 or 192");
  static_assert(kMulticastSize <= 2 && (kClusterM == 1 || kClusterN == 1), "multicast to two CTAs, along M or N");
  static_assert(kSplitK == 1 || (kMulticastSize == 1 && kSplitK <= 8), "split-K: up to 8 CTAs, no multicast");
  static_assert(kProblemKBlocks % kSplitK == 0, "the splits have equal shares of the K blocks");
  static_assert(kSplitK == 1 || kLayout == Layout::Normal || kLayout == Layout::Masked,
                "split-K for the normal and masked layouts");
  static_assert(!kPackedD || (kLayout == Layout::ContiguousPsum && kSplitK == 1), "packed D: the psum layout");
  static_assert(kTile.a_rows == 0 || (kLayout == Layout::Normal && kClusterN == 1 && kBlockM % kTile.a_rows == 0),
                "fewer rows of A than a tile: the normal layout, A not multicast");
  // Alternate K blocks: each warpgroup's stages are those of its K blocks' parity, and every warpgroup's last
  // block has the parity of the tile's last (where a step's math depends on it: two partial accumulators).
  static_assert(!kAlternateKBlocks || (kBlockM == 64 && kNumMathWarpgroups == 2 && kClusterSize == 1 &&
                                       kCSlots == 0 && kLayout == Layout::Normal && kNumStages % 4 == 0 &&
                                       kNumKBlocks % 4 == 0),
                "alternate K blocks: 64-row tiles of the normal layout, one CTA, no ring of C, the stages and the K "
                "blocks multiples of four");
  static_assert(kBlockN % kWarpgroupCols == 0, "BLOCK_N splits evenly between the warpgroups");
  static_assert(kStagedCols % 8 == 0, "a staging pass is whole 8-column groups of the accumulators");
  static_assert(kStagedCols * kOutputBytes % 16 == 0, "staged rows of D are whole 16-byte units");
  static_assert(kStagedCols % kChunkCols == 0, "the swizzle width divides the columns of a staging pass");
};

}  // namespace fgemm::sm90
