// The sm90 FP8 GEMM with fine-grained scaling: D = A * B^T (+ C), A and B in E4M3, K contiguous, in the
// normal, m-grouped contiguous and m-grouped masked layouts (one kernel body, the layout a template value).
//
// One CTA per SM walks its tiles (persistent), with clusters of two CTAs optionally sharing an operand by
// TMA multicast. Warpgroups:
//   - two or three math warpgroups (0, 1 and 2 for 192-row tiles): each owns a 64 x kWarpgroupN part of the
//     tile, multiplies a K block with four wgmma m64nNk32 into FP32 registers ("partial"), then promotes:
//     acc += partial * sfa * sfb (a warpgroup of 256 columns does so for each half of its columns in turn);
//   - the producer (the last warpgroup): one thread streams 128-wide K blocks of A and B, and of sfa for the
//     tile's rows, through a ring of kNumStages shared-memory stages with TMA, each stage guarded by a "full"
//     and an "empty" mbarrier. Where sfa is not MN-major with 16-byte aligned columns (what the TMA can
//     load), one warp copies the scales of A into the stages instead.
// Hopper's FP8 tensor cores keep only about 14 bits of the running sum, so the sum over one K block is
// taken from the tensor cores and scaled into a full FP32 accumulator on the CUDA cores. Where registers
// allow, each warpgroup has two partial accumulators and promotes one block while its next block's MMAs run;
// otherwise the other warpgroups' MMAs keep the tensor cores busy during a promotion.
// The math threads read sfb, one or two values per K block, from global memory while the block's MMAs run.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/epilogue.cuh"
#include "fgemm/gemm_params.cuh"
#include "fgemm/ptx.cuh"
#include "fgemm/scheduler.cuh"

namespace fgemm::sm90 {

template <uint32_t kBlockM_, uint32_t kBlockN_, uint32_t kNumStages_, uint32_t kShapeN_, uint32_t kShapeK_,
          bool kOutputF32_, bool kHasC_, uint32_t kSwizzleDBytes_, uint32_t kBandM_, Layout kLayout_,
          uint32_t kClusterM_, uint32_t kClusterN_, bool kSfaByTma_>
struct GemmConfig {
  static constexpr uint32_t kBlockM = kBlockM_;
  static constexpr uint32_t kBlockN = kBlockN_;
  static constexpr uint32_t kBlockK = 128;  // one scale block of K: 128 FP8 bytes, one 128-byte swizzle row
  static constexpr uint32_t kNumStages = kNumStages_;
  static constexpr uint32_t kShapeN = kShapeN_;
  static constexpr uint32_t kShapeK = kShapeK_;
  static constexpr bool kOutputF32 = kOutputF32_;
  static constexpr bool kHasC = kHasC_;
  static constexpr uint32_t kSwizzleDBytes = kSwizzleDBytes_;  // 128, 64, 32, or 0 for none
  static constexpr uint32_t kBandM = kBandM_;
  static constexpr Layout kLayout = kLayout_;
  // sfa is MN-major with 16-byte aligned columns, so the TMA thread loads it with A; otherwise a warp of
  // the producer copies it with cp.async, one scale at a time, which costs the main loop about a tenth.
  static constexpr bool kSfaByTma = kSfaByTma_;
  // A cluster of kClusterM x kClusterN CTAs: tiles side by side along M share B, along N share A. Each CTA
  // loads a 1/kClusterSize slice of the shared operand and multicasts it to the cluster.
  static constexpr uint32_t kClusterM = kClusterM_;
  static constexpr uint32_t kClusterN = kClusterN_;
  static constexpr uint32_t kClusterSize = kClusterM * kClusterN;
  static constexpr uint32_t kSliceRowsA = kClusterN > 1 ? kBlockM / kClusterSize : kBlockM;
  static constexpr uint32_t kSliceRowsB = kClusterM > 1 ? kBlockN / kClusterSize : kBlockN;

  // The math warpgroups split the tile: three along M (BLOCK_M 192), two along M (128) or two along N (64).
  static constexpr uint32_t kNumMathWarpgroups = kBlockM == 192 ? 3 : 2;
  static constexpr uint32_t kWarpgroupRows = kBlockM / 64;
  static constexpr uint32_t kWarpgroupCols = kNumMathWarpgroups / kWarpgroupRows;
  static constexpr uint32_t kWarpgroupN = kBlockN / kWarpgroupCols;
  static constexpr uint32_t kNumThreads = 128 * (kNumMathWarpgroups + 1);
  static constexpr uint32_t kNumKBlocks = ceil_div(kShapeK, kBlockK);
  static constexpr uint32_t kNumNBlocksOfB = ceil_div(kShapeN, 128u);
  // A warpgroup's columns lie in one 128-row block of B's scales, so one sfb value serves them all.
  static constexpr bool kUniformScaleB = 128 % kWarpgroupN == 0;
  // Otherwise they must lie in two: the promotion picks one of two sfb values per column.
  static constexpr bool spans_at_most_two_scale_blocks() {
    for (uint32_t n_block = 0; n_block < 128; ++n_block)
      for (uint32_t wg_col = 0; wg_col < kWarpgroupCols; ++wg_col)
        if ((n_block * kBlockN + wg_col * kWarpgroupN) % 128 + kWarpgroupN > 256) return false;
    return true;
  }

  // A second partial accumulator lets a warpgroup promote one K block while its next block's MMAs run: where
  // three accumulators of kWarpgroupN / 2 registers fit the math threads' registers (232 with two math
  // warpgroups, 160 with three) beside addresses, scales and loop state.
  static constexpr bool kTwoPartials = kWarpgroupN <= (kNumMathWarpgroups == 3 ? 64 : 128);
  // A warpgroup of 256 columns (BLOCK_M 128 x BLOCK_N 256) multiplies them in two halves of 128 through one
  // partial accumulator: 128 + 64 registers. Against 128 x 128 tiles, the TMA traffic into shared memory per
  // MMA falls by a quarter (the wgmma read shared memory too, and both compete for its bandwidth).
  static constexpr uint32_t kColumnHalves = kWarpgroupN > 160 ? 2 : 1;
  static constexpr uint32_t kMmaN = kWarpgroupN / kColumnHalves;  // the N of each wgmma

  static constexpr uint32_t kOutputBytes = kOutputF32 ? 4 : 2;
  // Each warpgroup stages its part of D in shared memory for the TMA store: all kWarpgroupN columns at once,
  // or one column half at a time where 128 x 256 tiles have a fourth stage (there is room for half of D only).
  static constexpr uint32_t kStagingPasses = kColumnHalves == 2 && kNumStages >= 4 ? 2 : 1;
  static constexpr uint32_t kStagedCols = kWarpgroupN / kStagingPasses;
  // A pass is staged in chunks of kChunkCols columns, one TMA store each.
  static constexpr uint32_t kChunkBytes = kSwizzleDBytes ? kSwizzleDBytes : kStagedCols * kOutputBytes;
  static constexpr uint32_t kChunkCols = kChunkBytes / kOutputBytes;
  static constexpr uint32_t kNumChunks = kStagedCols / kChunkCols;
  static constexpr uint32_t kSmemDPerWarpgroup = 64 * kStagedCols * kOutputBytes;
  static constexpr uint32_t kSmemA = kBlockM * kBlockK;
  static constexpr uint32_t kSmemB = kBlockN * kBlockK;
  static constexpr uint32_t kSmemSfa = kBlockM * 4;  // a stage's scales of A: the tile's rows
  static constexpr uint32_t kSmemBytes = kNumMathWarpgroups * kSmemDPerWarpgroup +
                                         kNumStages * (kSmemA + kSmemB + kSmemSfa) + kNumStages * 2 * 8;

  static_assert(kBlockM == 64 || kBlockM == 128 || kBlockM == 192, "BLOCK_M is 64, 128 or 192");
  static_assert(kClusterSize <= 2 && (kClusterM == 1 || kClusterN == 1), "clusters of two CTAs, along M or N");
  // Each slice starts on a 1024-byte boundary, where the 128-byte swizzle pattern starts.
  static_assert(kSliceRowsA % 8 == 0 && kSliceRowsB % 8 == 0, "operand slices are whole swizzle atoms");
  static_assert(kMmaN % 8 == 0 && kMmaN >= 8 && kMmaN <= 256, "wgmma N is a multiple of 8 in [8, 256]");
  static_assert(kColumnHalves == 1 || (kNumMathWarpgroups == 2 && kWarpgroupCols == 1 && kMmaN == 128),
                "only 128 x 256 tiles multiply in column halves, each in one 128-column block of sfb");
  static_assert(kBlockN % kWarpgroupCols == 0, "BLOCK_N splits evenly between the warpgroups");
  static_assert(kWarpgroupN * kOutputBytes % 16 == 0, "staged rows of D are whole 16-byte units");
  static_assert(kStagedCols % kChunkCols == 0, "the swizzle width divides the columns of a staging pass");
  static_assert(!kHasC || kLayout == Layout::Normal, "C is added in the normal layout only");
  static_assert(spans_at_most_two_scale_blocks(), "a warpgroup's columns span at most two 128-column scale blocks");
  // TMA stores clip at the edge of D in 16-byte units: where a row of D does not end on one, the tile
  // at that edge is stored element by element.
  static constexpr bool kRaggedN = kShapeN * kOutputBytes % 16 != 0;
};

// Registers: the producer warpgroup needs few, the math warpgroups hold two or three accumulators each. All
// of them share the SM's 64 K registers: 128 x 40 + 256 x 232 with two math warpgroups, 128 x 40 + 384 x 152
// with three.
template <class C>
constexpr uint32_t kProducerRegisters = 40;
template <class C>
constexpr uint32_t kMathRegisters = C::kNumMathWarpgroups == 3 ? 152 : 232;

// Every tile walks the ring of stages from stage 0: K block kb of a tile goes through stage kb % kNumStages.
// The math warpgroups' K loop is unrolled over the stages, so each stage's barriers and shared-memory
// descriptors are compile-time offsets of warp-uniform bases: the MMAs of a block issue back to back, with
// no address arithmetic between them. A stage is then used kFullRounds or kFullRounds + 1 times per tile,
// and its n-th use waits for its barriers' phase of parity n & 1.
template <class C>
struct Ring {
  static constexpr uint32_t kFullRounds = C::kNumKBlocks / C::kNumStages;
  static constexpr uint32_t kLastRoundStages = C::kNumKBlocks % C::kNumStages;

  // Parity of stage `stage`'s use in round `round` of a tile, after `tiles_before` tiles of this CTA.
  __device__ __forceinline__ static uint32_t parity(uint32_t stage, uint32_t round, uint32_t tiles_before) {
    const uint32_t uses_per_tile = kFullRounds + (static_cast<int>(stage) < static_cast<int>(kLastRoundStages));
    return ((tiles_before & uses_per_tile) ^ round) & 1;
  }
};

// Loads one operand's box of `rows` x 128 at (k0, row0) for the stage at `dst`. An operand shared by the
// cluster is loaded as kClusterSize slices: with multicast, this CTA loads only its own slice, to all CTAs.
template <class C, bool kStacked>
__device__ __forceinline__ void load_operand(uint8_t* dst, const ptx::TensorMap* map, uint64_t* barrier,
                                             uint32_t slice_rows, uint32_t rows, bool multicast, uint32_t rank,
                                             int32_t k0, int32_t row0, uint32_t group) {
  for (uint32_t slice = 0; slice < rows / slice_rows; ++slice) {
    if (multicast && slice != rank) continue;
    uint8_t* slice_dst = dst + slice * slice_rows * C::kBlockK;
    const int32_t slice_row0 = row0 + slice * slice_rows;
    constexpr uint16_t kAllCtas = (1u << C::kClusterSize) - 1;
    if constexpr (kStacked) {
      if (multicast)
        ptx::tma_load_3d_multicast(slice_dst, map, barrier, kAllCtas, k0, slice_row0, group);
      else
        ptx::tma_load_3d(slice_dst, map, barrier, k0, slice_row0, group);
    } else {
      if (multicast)
        ptx::tma_load_2d_multicast(slice_dst, map, barrier, kAllCtas, k0, slice_row0);
      else
        ptx::tma_load_2d(slice_dst, map, barrier, k0, slice_row0);
    }
  }
}

// The producers' walk: every K block of every tile of the CTA, in the ring's order, calling
// fill(tile, group, kb, stage) once the stage is free. An out-of-range expert (a bad m_indices entry) reads
// expert 0; its rows are written as NaN.
template <class C, class Scheduler, class Fill>
__device__ __forceinline__ void fill_stages(Scheduler scheduler, uint64_t* empty, Fill fill) {
  uint32_t tiles_before = 0;
  Tile tile;
  while (scheduler.next(tile)) {
    const uint32_t group = tile.group < scheduler.num_groups ? tile.group : 0;
    for (uint32_t kb = 0; kb < C::kNumKBlocks; ++kb) {
      const uint32_t stage = kb % C::kNumStages;
      ptx::mbarrier_wait(&empty[stage], Ring<C>::parity(stage, kb / C::kNumStages, tiles_before) ^ 1);
      fill(tile, group, kb, stage);
    }
    ++tiles_before;
  }
}

// The TMA thread of the producer warpgroup: streams the K blocks of A and B (and sfa, where it is MN-major)
// of every tile through the stages.
template <class C, class Scheduler>
__device__ __forceinline__ void produce(Scheduler scheduler, uint32_t rank, uint8_t* smem_a, uint8_t* smem_b,
                                        float* smem_sfa, uint64_t* full, uint64_t* empty,
                                        const ptx::TensorMap* tmap_a, const ptx::TensorMap* tmap_b,
                                        const ptx::TensorMap* tmap_sfa) {
  constexpr bool kMasked = C::kLayout == Layout::Masked;
  constexpr bool kGroupedB = C::kLayout != Layout::Normal;
  fill_stages<C>(scheduler, empty, [&](const Tile& tile, uint32_t group, uint32_t kb, uint32_t stage) {
    const int32_t m0 = tile.m_block * C::kBlockM, n0 = tile.n_block * C::kBlockN, k0 = kb * C::kBlockK;
    const bool multicast = C::kClusterSize > 1 && tile.multicast;
    // The bytes that land in this CTA's stage, its own loads and its peers' multicasts together.
    ptx::mbarrier_arrive_expect_tx(&full[stage], C::kSmemA + C::kSmemB + (C::kSfaByTma ? C::kSmemSfa : 0));
    if constexpr (C::kSfaByTma) {
      // Rows past the end of sfa read as zero: their rows of A are zero fill too, or are never stored.
      float* sfa_dst = smem_sfa + stage * C::kBlockM;
      if constexpr (kMasked)
        ptx::tma_load_3d(sfa_dst, tmap_sfa, &full[stage], m0, kb, group);
      else
        ptx::tma_load_2d(sfa_dst, tmap_sfa, &full[stage], m0, kb);
    }
    load_operand<C, kMasked>(smem_a + stage * C::kSmemA, tmap_a, &full[stage], C::kSliceRowsA, C::kBlockM,
                             multicast && C::kClusterN > 1, rank, k0, m0, group);
    load_operand<C, kGroupedB>(smem_b + stage * C::kSmemB, tmap_b, &full[stage], C::kSliceRowsB, C::kBlockN,
                               multicast && C::kClusterM > 1, rank, k0, n0, group);
  });
}

// The scale loader of sfa that is not MN-major (one warp of the producer warpgroup): copies every K block's
// scales of the tile's rows into its stage with cp.async, whose completion counts as the warp's 32 arrivals
// on the stage's full barrier.
template <class C, class Scheduler>
__device__ __forceinline__ void load_scales_a(const GemmParams& params, Scheduler scheduler, float* smem_sfa,
                                              uint64_t* full, uint64_t* empty) {
  const uint32_t lane = threadIdx.x % 32;
  fill_stages<C>(scheduler, empty, [&](const Tile& tile, uint32_t group, uint32_t kb, uint32_t stage) {
    const float* sfa = params.sfa + group * params.sfa_group_stride + kb * params.sfa_k_stride;
    const uint32_t m0 = tile.m_block * C::kBlockM;
    for (uint32_t i = lane; i < C::kBlockM; i += 32) {
      // A row past the end reads row 0's scales: its A row is TMA zero fill, or a row never stored.
      const uint32_t row = m0 + i < tile.rows ? m0 + i : 0;
      ptx::cp_async_4(smem_sfa + stage * C::kBlockM + i, sfa + row * params.sfa_m_stride);
    }
    ptx::cp_async_mbarrier_arrive(&full[stage]);
  });
}

// The math warpgroups: MMAs, promotion and the epilogue of every tile of the CTA.
template <class C, class Wgmma, class Scheduler>
__device__ __forceinline__ void consume(const GemmParams& params, Scheduler scheduler, uint8_t* smem_a, uint8_t* smem_b,
                                        const float* smem_sfa, uint8_t* smem_d,
                                        uint64_t* full, uint64_t* empty, const ptx::TensorMap* tmap_d) {
  ptx::setmaxnreg_increase<kMathRegisters<C>>();
  constexpr uint32_t kNumStages = C::kNumStages;
  constexpr bool kMasked = C::kLayout == Layout::Masked;
  // Read through a shuffle, so that ptxas knows it is warp-uniform: the descriptors below then live in
  // uniform registers.
  const uint32_t warpgroup = __shfl_sync(0xffffffff, threadIdx.x / 128, 0);
  const uint32_t wg_row = warpgroup / C::kWarpgroupCols;
  const uint32_t wg_col = warpgroup % C::kWarpgroupCols;
  const uint32_t lane = threadIdx.x % 32;
  // This thread's accumulator rows in the warpgroup's 64 rows: r and r + 8 (the wgmma fragment layout).
  const uint32_t row_in_wg = (threadIdx.x / 32 % 4) * 16 + lane / 4;
  // Shared memory ends below 256 KiB, so stepping a descriptor's 14-bit address field never carries over.
  uint64_t desc_a_base =
      ptx::smem_descriptor_k_major_sw128(ptx::smem_address(smem_a) + wg_row * 64 * C::kBlockK);
  uint64_t desc_b_base =
      ptx::smem_descriptor_k_major_sw128(ptx::smem_address(smem_b) + wg_col * C::kWarpgroupN * C::kBlockK);
  uint8_t* staging = smem_d + warpgroup * C::kSmemDPerWarpgroup;
  const uint32_t smem_sfa_base = ptx::smem_address(smem_sfa);

  constexpr uint32_t kFragments = C::kWarpgroupN / 2;
  constexpr uint32_t kMmaFragments = C::kMmaN / 2;
  float partial[kMmaFragments];
  float partial2[C::kTwoPartials ? kMmaFragments : 1];
  float acc[kFragments];
  uint32_t tiles_before = 0;

  Tile tile;
  while (scheduler.next(tile)) {
    const bool group_valid = tile.group < params.num_groups;
    const uint32_t group = group_valid ? tile.group : 0;
    const uint32_t m_base = tile.m_block * C::kBlockM + wg_row * 64;
    const uint32_t n_base = tile.n_block * C::kBlockN + wg_col * C::kWarpgroupN;
    const uint32_t row0 = m_base + row_in_wg, row1 = row0 + 8;
    const uint32_t rows = tile.rows;
    // The experts of this thread's two rows (contiguous layout), read now for the epilogue, so that the
    // loads' latency hides behind the K loop.
    int32_t row_experts[2] = {-1, -1};
    if constexpr (C::kLayout == Layout::Contiguous) {
      if (row0 < params.m) row_experts[0] = params.m_indices[row0];
      if (row1 < params.m) row_experts[1] = params.m_indices[row1];
    }

    // This thread's scales of a K block: sfa of its rows, from the stage, and sfb of the one or two
    // 128-column blocks its warpgroup's columns touch (a warpgroup wholly past N reads the last block's; its
    // columns are never stored), from global memory while MMAs run. sfb is addressed by a 32-bit element
    // offset (the host refuses a larger sfb), made warp-uniform through a shuffle: with three math
    // warpgroups, a 64-bit pointer per thread would make ptxas spill in the K loop.
    const uint32_t nb0 = min_of(n_base / 128, C::kNumNBlocksOfB - 1);
    const uint32_t nb1 = min_of(nb0 + 1, C::kNumNBlocksOfB - 1);
    const uint32_t sfa_address = smem_sfa_base + (wg_row * 64 + row_in_wg) * 4;  // row 1: 8 rows on
    const uint32_t sfb_offset =
        __shfl_sync(0xffffffff, static_cast<uint32_t>(group * params.sfb_group_stride + nb0 * params.sfb_n_stride), 0);
    const uint32_t sfb_second_block = (nb1 - nb0) * static_cast<uint32_t>(params.sfb_n_stride);
    const uint32_t first_block_cols = 128 - n_base % 128;  // columns [0, this) use nb0, the rest nb1
    struct Scales {
      float a0, a1, b0, b1;
    };
    struct ScalesB {
      float b0, b1;
    };
    auto load_sfb = [&](uint32_t kb) {
      const uint32_t block = sfb_offset + kb * static_cast<uint32_t>(params.sfb_k_stride);
      const float b0 = ptx::load_readonly(params.sfb + block);
      return ScalesB{b0, C::kUniformScaleB ? b0 : ptx::load_readonly(params.sfb + block + sfb_second_block)};
    };
    // Two math warpgroups have the registers to read sfb a K block ahead, so that its latency hides behind
    // a whole block (4-7% on the masked K = 2048 seed shapes); three read it in the block's own step.
    constexpr bool kSfbAhead = C::kNumMathWarpgroups == 2;
    ScalesB next_sfb{};
    if constexpr (kSfbAhead) next_sfb = load_sfb(0);
    auto read_scales = [&](uint32_t stage, uint32_t round) {
      const uint32_t kb = round * kNumStages + stage;
      const uint32_t sfa = sfa_address + stage * C::kBlockM * 4;
      const ScalesB sfb = kSfbAhead ? next_sfb : load_sfb(kb);
      if constexpr (kSfbAhead) next_sfb = load_sfb(min_of(kb + 1, C::kNumKBlocks - 1));
      return Scales{ptx::load_shared_f32(sfa), ptx::load_shared_f32(sfa + 8 * 4), sfb.b0, sfb.b1};
    };
    // Waits for the stage of a K block (with its first half of columns) and starts its four MMAs (128 of K)
    // into `p`, for one half of the warpgroup's columns where it has two.
    auto issue = [&](uint32_t stage, uint32_t round, float (&p)[kMmaFragments], uint32_t half = 0) {
      if (half == 0) ptx::mbarrier_wait(&full[stage], Ring<C>::parity(stage, round, tiles_before));
#pragma unroll
      for (uint32_t i = 0; i < kMmaFragments; ++i) ptx::fence_operand(p[i]);
      ptx::wgmma_fence();
      // Descriptors address shared memory in 16-byte units: step them from the stage's first one.
      const uint64_t desc_a = desc_a_base + stage * (C::kSmemA / 16);
      const uint64_t desc_b = desc_b_base + stage * (C::kSmemB / 16) + half * (C::kMmaN * C::kBlockK / 16);
#pragma unroll
      for (uint32_t kk = 0; kk < C::kBlockK / 32; ++kk) Wgmma::mma(p, desc_a + kk * 2, desc_b + kk * 2, kk > 0);
      ptx::wgmma_commit_group();
    };
    // Once a stage's MMAs are complete, the stage goes back to the producer (of every CTA of the cluster).
    auto release = [&](uint32_t stage) {
      __syncwarp();
      if constexpr (C::kClusterSize > 1) {
        // One lane per CTA: arrivals from one lane on the cluster's barriers follow one another slowly (two
        // from one lane cost 128 x 256 tiles about 80 cycles per K block, 7%, in bench/mainloop_probe.cu).
        if (lane < C::kClusterSize) ptx::mbarrier_arrive_cluster(&empty[stage], lane);
      } else if (lane == 0) {
        ptx::mbarrier_arrive(&empty[stage]);
      }
    };
    // acc += p * sfa * sfb, for a complete partial sum `p` of one half of the columns (or all of them).
    auto promote = [&](float (&p)[kMmaFragments], const Scales& s, uint32_t half = 0) {
#pragma unroll
      for (uint32_t i = 0; i < kMmaFragments; ++i) ptx::fence_operand(p[i]);
      // Fragment i of p holds row (i / 2 % 2 ? row1 : row0) and, of the warpgroup's columns, column
      // half * kMmaN + (i / 4) * 8 + (lane % 4) * 2 + i % 2: acc's fragment 4j + i % 4 for its 8-column group j.
      const float scale00 = s.a0 * s.b0, scale10 = s.a1 * s.b0, scale01 = s.a0 * s.b1, scale11 = s.a1 * s.b1;
#pragma unroll
      for (uint32_t jj = 0; jj < C::kMmaN / 8; ++jj) {
        const uint32_t j = half * (C::kMmaN / 8) + jj;  // the column group in the warpgroup's columns
        const bool first_block = C::kUniformScaleB || j * 8 < first_block_cols;
        const float scale_row0 = first_block ? scale00 : scale01;
        const float scale_row1 = first_block ? scale10 : scale11;
        acc[4 * j + 0] = fmaf(p[4 * jj + 0], scale_row0, acc[4 * j + 0]);
        acc[4 * j + 1] = fmaf(p[4 * jj + 1], scale_row0, acc[4 * j + 1]);
        acc[4 * j + 2] = fmaf(p[4 * jj + 2], scale_row1, acc[4 * j + 2]);
        acc[4 * j + 3] = fmaf(p[4 * jj + 3], scale_row1, acc[4 * j + 3]);
      }
    };

#pragma unroll
    for (uint32_t i = 0; i < kFragments; ++i) acc[i] = 0.0f;

    // One K block, kb = round * kNumStages + stage; `odd` is kb % 2.
    Scales scales;
    auto step = [&](uint32_t stage, uint32_t round, bool odd) {
      if constexpr (C::kTwoPartials) {
        // Block kb's MMAs run, into the partial accumulator of kb's parity, while block kb - 1 is promoted
        // from the other. Each step ends with its MMAs complete: with no MMA in flight across a back edge,
        // ptxas can prove that no promotion reads an accumulator an MMA is writing, and keeps the MMAs
        // asynchronous (otherwise it serializes them, C7514).
        float(&current)[kMmaFragments] = odd ? partial2 : partial;
        float(&previous)[kMmaFragments] = odd ? partial : partial2;
        issue(stage, round, current);
        const Scales current_scales = read_scales(stage, round);
        promote(previous, scales);
        ptx::wgmma_wait_group<0>();
        release(stage);
        scales = current_scales;
      } else if constexpr (C::kColumnHalves == 2) {
        // Two halves through one partial accumulator; the other warpgroup's MMAs run during each promotion.
        issue(stage, round, partial, 0);
        const Scales current_scales = read_scales(stage, round);
        ptx::wgmma_wait_group<0>();
        promote(partial, current_scales, 0);
        issue(stage, round, partial, 1);
        ptx::wgmma_wait_group<0>();
        release(stage);
        promote(partial, current_scales, 1);
      } else {
        // One partial accumulator: the other warpgroups' MMAs keep the tensor cores busy during a promotion.
        issue(stage, round, partial);
        const Scales current_scales = read_scales(stage, round);
        ptx::wgmma_wait_group<0>();
        release(stage);
        promote(partial, current_scales);
      }
    };
    if constexpr (C::kTwoPartials) {
      // The first step promotes "block -1": zeros.
      scales = Scales{0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
      for (uint32_t i = 0; i < kMmaFragments; ++i) partial2[i] = 0.0f;
    }
    // The loop is unrolled over the stages (over two rounds where an odd number of stages would change the
    // parity of a stage's blocks from round to round), so stages and parities are compile-time constants.
    using R = Ring<C>;
    constexpr uint32_t kRoundsPerIteration = C::kTwoPartials && kNumStages % 2 == 1 ? 2 : 1;
    // Every stage's descriptors are loop invariants, which ptxas would hoist out of the loop into registers
    // and spill: passing their bases through a shuffle once per round keeps them computed where they are used.
    auto new_round = [&]() {
      desc_a_base = __shfl_sync(0xffffffff, desc_a_base, 0);
      desc_b_base = __shfl_sync(0xffffffff, desc_b_base, 0);
    };
    for (uint32_t round = 0; round + kRoundsPerIteration <= R::kFullRounds; round += kRoundsPerIteration) {
      new_round();
#pragma unroll
      for (uint32_t i = 0; i < kRoundsPerIteration * kNumStages; ++i)
        step(i % kNumStages, round + i / kNumStages, i % 2 == 1);
    }
    new_round();
    if constexpr (kRoundsPerIteration == 2 && R::kFullRounds % 2 == 1) {
#pragma unroll
      for (uint32_t i = 0; i < kNumStages; ++i) step(i, R::kFullRounds - 1, i % 2 == 1);
    }
#pragma unroll
    for (int i = 0; i < static_cast<int>(R::kLastRoundStages); ++i)
      step(i, R::kFullRounds, (R::kFullRounds * kNumStages + i) % 2 == 1);
    if constexpr (C::kTwoPartials) promote((C::kNumKBlocks - 1) % 2 == 0 ? partial : partial2, scales);
    ++tiles_before;

    // ---------------------------------------------------------------- epilogue
    if (!tile.valid) continue;  // a filler tile that kept a cluster partner company
    if constexpr (C::kHasC) {
#pragma unroll
      for (uint32_t i = 0; i < kFragments; ++i) {
        const uint32_t row = i / 2 % 2 ? row1 : row0;
        const uint32_t col = n_base + (i / 4) * 8 + (lane % 4) * 2 + i % 2;
        if (row < params.m && col < C::kShapeN)
          acc[i] += ptx::load_readonly(params.c + row * params.c_row_stride + col);
      }
    }
    // Grouped layouts write only their rows: rows past masked_m, and padding rows (m_indices -1) of the
    // contiguous layout, keep what D held; rows whose m_indices disagrees with the tile's expert (segments
    // not aligned to BLOCK_M, or an expert index out of range) become NaN rather than a wrong number.
    RowAction actions[2] = {row0 < params.m ? RowAction::Write : RowAction::Skip,
                            row1 < params.m ? RowAction::Write : RowAction::Skip};
    if constexpr (C::kLayout == Layout::Contiguous) {
      for (uint32_t half = 0; half < 2; ++half) {
        const int32_t expert = row_experts[half];
        actions[half] = expert == -1 ? RowAction::Skip
                        : group_valid && static_cast<uint32_t>(expert) == tile.group ? RowAction::Write
                                                                                      : RowAction::WriteNaN;
      }
    } else if constexpr (kMasked) {
      actions[0] = row0 < rows ? RowAction::Write : RowAction::Skip;
      actions[1] = row1 < rows ? RowAction::Write : RowAction::Skip;
    }
    // Rows past the end of A count as full: TMA clips them. So in the normal layout only a ragged N makes
    // tiles partial, and its kernels have no code for them otherwise.
    constexpr bool kPartialTiles = C::kLayout != Layout::Normal || C::kRaggedN;
    const bool clipped_by_tma = !C::kRaggedN || n_base + C::kWarpgroupN <= C::kShapeN;
    const bool full_tile = ptx::named_barrier_and(
        1 + warpgroup, 128,
        clipped_by_tma && (actions[0] == RowAction::Write || row0 >= params.m) &&
            (actions[1] == RowAction::Write || row1 >= params.m));
    Epilogue<C>::staged(acc, staging, 1 + warpgroup, [&](uint32_t pass) {
      if (full_tile) {
        Epilogue<C>::store_to_tma(staging, 1 + warpgroup, pass, [&](const uint8_t* chunk, uint32_t chunk_col) {
          if constexpr (kMasked)
            ptx::tma_store_3d(tmap_d, chunk, n_base + chunk_col, m_base, group);
          else
            ptx::tma_store_2d(tmap_d, chunk, n_base + chunk_col, m_base);
        });
      } else if (kPartialTiles && n_base < C::kShapeN) {
        const int64_t offset = group * params.d_group_stride + m_base * params.d_row_stride + n_base;
        void* d = static_cast<uint8_t*>(params.d) + offset * C::kOutputBytes;
        Epilogue<C>::store_rows(staging, pass, d, params.d_row_stride, C::kShapeN - n_base, actions);
      }
    });
  }
  if (threadIdx.x % 128 == 0) ptx::bulk_wait_group_all();
}

template <class Config, class Wgmma>
__device__ __forceinline__ void fp8_gemm(const GemmParams& params, const ptx::TensorMap* tmap_a,
                                         const ptx::TensorMap* tmap_b, const ptx::TensorMap* tmap_sfa,
                                         const ptx::TensorMap* tmap_d) {
  using C = Config;
  static_assert(Wgmma::N == C::kMmaN, "the wgmma shape matches the configuration");
  constexpr uint32_t kNumStages = C::kNumStages;

  // Every buffer starts on a 1024-byte boundary, where the 128-byte swizzle's pattern starts (the TMA and
  // wgmma address it from there). The kernel has no static shared memory, and the dynamic one starts aligned.
  extern __shared__ __align__(1024) uint8_t smem[];
  if (ptx::smem_address(smem) % 1024 != 0) __trap();
  uint8_t* smem_d = smem;
  uint8_t* smem_a = smem_d + C::kNumMathWarpgroups * C::kSmemDPerWarpgroup;
  uint8_t* smem_b = smem_a + kNumStages * C::kSmemA;
  float* smem_sfa = reinterpret_cast<float*>(smem_b + kNumStages * C::kSmemB);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem_sfa + kNumStages * C::kBlockM);
  uint64_t* empty = full + kNumStages;

  constexpr uint32_t kProducerThread = C::kNumMathWarpgroups * 128;
  if (threadIdx.x == kProducerThread) {
    ptx::prefetch_tensor_map(tmap_a);
    ptx::prefetch_tensor_map(tmap_b);
    ptx::prefetch_tensor_map(tmap_d);
    if constexpr (C::kSfaByTma) ptx::prefetch_tensor_map(tmap_sfa);
    for (uint32_t s = 0; s < kNumStages; ++s) {
      // The TMA thread's arrival (with the bytes it expects), and the scale loader's 32 where there is one.
      ptx::mbarrier_init(&full[s], C::kSfaByTma ? 1 : 1 + 32);
      // One arrival per math warp of every CTA of the cluster: a stage is refilled (possibly by a peer's
      // multicast) only once all of them are done with it.
      ptx::mbarrier_init(&empty[s], C::kNumMathWarpgroups * 4 * C::kClusterSize);
    }
    ptx::fence_barrier_init();
  }
  // The peers' barriers must be initialised before any multicast or remote arrival reaches them.
  if constexpr (C::kClusterSize > 1)
    ptx::cluster_sync();
  else
    __syncthreads();

  const uint32_t rank = C::kClusterSize > 1 ? ptx::cluster_rank() : 0;
  Scheduler<C::kLayout, C::kBlockM, C::kBlockN, C::kShapeN, C::kBandM, C::kClusterM, C::kClusterN> scheduler(
      params.m, params.num_groups, params.m_indices, params.masked_m, rank, blockIdx.x / C::kClusterSize,
      gridDim.x / C::kClusterSize);

  if (threadIdx.x / 128 == C::kNumMathWarpgroups) {
    // ---------------------------------------------------------------- producer
    ptx::setmaxnreg_decrease<kProducerRegisters<C>>();
    if (threadIdx.x == kProducerThread)
      produce<C>(scheduler, rank, smem_a, smem_b, smem_sfa, full, empty, tmap_a, tmap_b, tmap_sfa);
    if (!C::kSfaByTma && threadIdx.x / 32 == kProducerThread / 32 + 1)
      load_scales_a<C>(params, scheduler, smem_sfa, full, empty);
  } else {
    consume<C, Wgmma>(params, scheduler, smem_a, smem_b, smem_sfa, smem_d, full, empty, tmap_d);
  }
  // A CTA leaves only when its peers no longer write to its shared memory or arrive on its barriers.
  if constexpr (C::kClusterSize > 1) ptx::cluster_sync();
}

}  // namespace fgemm::sm90
