// The sm90 FP8 GEMM with fine-grained scaling: D = A * B^T (+ C), A and B in E4M3, K contiguous, in the
// normal, m-grouped contiguous and m-grouped masked layouts (one kernel body, the layout a template value).
//
// One CTA per SM walks its tiles (persistent), with clusters of two CTAs optionally sharing an operand by
// TMA multicast. Warpgroups:
//   - two or three math warpgroups (0, 1 and 2 for 192-row tiles): each owns a 64 x kWgmmaN part of the
//     tile, multiplies a K block with four wgmma m64nNk32 into FP32 registers ("partial"), then promotes:
//     acc += partial * sfa * sfb;
//   - the producer (the last warpgroup): one thread streams 128-wide K blocks of A and B through a ring of
//     kNumStages shared-memory stages with TMA, each stage guarded by a "full" and an "empty" mbarrier.
// Hopper's FP8 tensor cores keep only about 14 bits of the running sum, so the sum over one K block is
// taken from the tensor cores and scaled into a full FP32 accumulator on the CUDA cores. Where registers
// allow, each warpgroup has two partial accumulators and promotes one block while its next block's MMAs run;
// otherwise the other warpgroups' MMAs keep the tensor cores busy during a promotion.
// The scales are read by the math threads straight from global memory, one K block ahead, so sfa may have
// any strides (row-major or MN-major) at no cost.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/epilogue.cuh"
#include "fgemm/ptx.cuh"
#include "fgemm/scheduler.cuh"

namespace fgemm::sm90 {

struct GemmParams {
  uint32_t m;  // rows of A and D: M, M_sum (contiguous) or M_max (masked, per group)
  uint32_t num_groups;
  const float* sfa;
  int64_t sfa_m_stride;
  int64_t sfa_k_stride;
  int64_t sfa_group_stride;
  const float* sfb;
  int64_t sfb_n_stride;
  int64_t sfb_k_stride;
  int64_t sfb_group_stride;
  const float* c;
  int64_t c_row_stride;
  void* d;  // for the row-filtered stores of grouped tiles
  int64_t d_row_stride;
  int64_t d_group_stride;
  const int32_t* m_indices;
  const int32_t* masked_m;
};

template <uint32_t kBlockM_, uint32_t kBlockN_, uint32_t kNumStages_, uint32_t kShapeN_, uint32_t kShapeK_,
          bool kOutputF32_, bool kHasC_, uint32_t kSwizzleDBytes_, uint32_t kBandM_, Layout kLayout_,
          uint32_t kClusterM_, uint32_t kClusterN_>
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
  static constexpr uint32_t kWgmmaN = kBlockN / kWarpgroupCols;
  static constexpr uint32_t kNumThreads = 128 * (kNumMathWarpgroups + 1);
  static constexpr uint32_t kNumKBlocks = ceil_div(kShapeK, kBlockK);
  static constexpr uint32_t kNumNBlocksOfB = ceil_div(kShapeN, 128u);
  // A warpgroup's columns lie in one 128-row block of B's scales, so one sfb value serves them all.
  static constexpr bool kUniformScaleB = 128 % kWgmmaN == 0;
  // Otherwise they must lie in two: the promotion picks one of two sfb values per column.
  static constexpr bool spans_at_most_two_scale_blocks() {
    for (uint32_t n_block = 0; n_block < 128; ++n_block)
      for (uint32_t wg_col = 0; wg_col < kWarpgroupCols; ++wg_col)
        if ((n_block * kBlockN + wg_col * kWgmmaN) % 128 + kWgmmaN > 256) return false;
    return true;
  }

  // A second partial accumulator lets a warpgroup promote one K block while its next block's MMAs run: where
  // three accumulators of kWgmmaN / 2 registers fit the math threads' registers (232 with two math
  // warpgroups, 160 with three) beside addresses, scales and loop state.
  static constexpr bool kTwoPartials = kWgmmaN <= (kNumMathWarpgroups == 3 ? 64 : 128);

  static constexpr uint32_t kOutputBytes = kOutputF32 ? 4 : 2;
  // The D tile is staged per warpgroup in chunks of kChunkCols columns, one TMA store each.
  static constexpr uint32_t kChunkBytes = kSwizzleDBytes ? kSwizzleDBytes : kWgmmaN * kOutputBytes;
  static constexpr uint32_t kChunkCols = kChunkBytes / kOutputBytes;
  static constexpr uint32_t kNumChunks = kWgmmaN / kChunkCols;

  static constexpr uint32_t kSmemDPerWarpgroup = 64 * kWgmmaN * kOutputBytes;
  static constexpr uint32_t kSmemA = kBlockM * kBlockK;
  static constexpr uint32_t kSmemB = kBlockN * kBlockK;
  // 1024 bytes of slack to align the base to the 128-byte swizzle's 1024-byte pattern.
  static constexpr uint32_t kSmemBytes =
      1024 + kNumMathWarpgroups * kSmemDPerWarpgroup + kNumStages * (kSmemA + kSmemB) + kNumStages * 2 * 8;

  static_assert(kBlockM == 64 || kBlockM == 128 || kBlockM == 192, "BLOCK_M is 64, 128 or 192");
  static_assert(kClusterSize <= 2 && (kClusterM == 1 || kClusterN == 1), "clusters of two CTAs, along M or N");
  // Each slice starts on a 1024-byte boundary, where the 128-byte swizzle pattern starts.
  static_assert(kSliceRowsA % 8 == 0 && kSliceRowsB % 8 == 0, "operand slices are whole swizzle atoms");
  static_assert(kWgmmaN % 8 == 0 && kWgmmaN >= 8 && kWgmmaN <= 256, "wgmma N is a multiple of 8 in [8, 256]");
  static_assert(kBlockN % kWarpgroupCols == 0, "BLOCK_N splits evenly between the warpgroups");
  static_assert(kWgmmaN * kOutputBytes % 16 == 0, "staged rows of D are whole 16-byte units");
  static_assert(kWgmmaN % kChunkCols == 0, "the swizzle width divides the warpgroup's columns");
  static_assert(!kHasC || kLayout == Layout::Normal, "C is added in the normal layout only");
  static_assert(spans_at_most_two_scale_blocks(), "a warpgroup's columns span at most two 128-column scale blocks");
  // TMA stores clip at the edge of D in 16-byte units: where a row of D does not end on one, the tile
  // at that edge is stored element by element.
  static constexpr bool kRaggedN = kShapeN * kOutputBytes % 16 != 0;
};

// Registers: the producer needs few, the math warpgroups hold two accumulators each. All of them share the
// SM's 64 K registers: 128 x 40 + 256 x 232 with two math warpgroups, 128 x 24 + 384 x 160 with three.
template <class C>
constexpr uint32_t kProducerRegisters = C::kNumMathWarpgroups == 3 ? 24 : 40;
template <class C>
constexpr uint32_t kMathRegisters = C::kNumMathWarpgroups == 3 ? 160 : 232;

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

// The producer (one thread): streams the K blocks of A and B of every tile through the stage ring.
template <class C, class Scheduler>
__device__ __forceinline__ void produce(Scheduler scheduler, uint32_t rank, uint8_t* smem_a, uint8_t* smem_b,
                                        uint64_t* full, uint64_t* empty, const ptx::TensorMap* tmap_a,
                                        const ptx::TensorMap* tmap_b) {
  constexpr bool kMasked = C::kLayout == Layout::Masked;
  constexpr bool kGroupedB = C::kLayout != Layout::Normal;
  uint32_t stage = 0, phase = 0;
  Tile tile;
  while (scheduler.next(tile)) {
    // An out-of-range expert (a bad m_indices entry) reads expert 0; its rows are written as NaN.
    const uint32_t group = tile.group < scheduler.num_groups ? tile.group : 0;
    const int32_t m0 = tile.m_block * C::kBlockM, n0 = tile.n_block * C::kBlockN;
    const bool multicast = C::kClusterSize > 1 && tile.multicast;
    for (uint32_t kb = 0; kb < C::kNumKBlocks; ++kb) {
      const int32_t k0 = kb * C::kBlockK;
      ptx::mbarrier_wait(&empty[stage], phase ^ 1);
      // The bytes that land in this CTA's stage, its own loads and its peers' multicasts together.
      ptx::mbarrier_arrive_expect_tx(&full[stage], C::kSmemA + C::kSmemB);
      load_operand<C, kMasked>(smem_a + stage * C::kSmemA, tmap_a, &full[stage], C::kSliceRowsA, C::kBlockM,
                               multicast && C::kClusterN > 1, rank, k0, m0, group);
      load_operand<C, kGroupedB>(smem_b + stage * C::kSmemB, tmap_b, &full[stage], C::kSliceRowsB, C::kBlockN,
                                 multicast && C::kClusterM > 1, rank, k0, n0, group);
      if (++stage == C::kNumStages) stage = 0, phase ^= 1;
    }
  }
}

// The math warpgroups: MMAs, promotion and the epilogue of every tile of the CTA.
template <class C, class Wgmma, class Scheduler>
__device__ __forceinline__ void consume(const GemmParams& params, Scheduler scheduler, uint8_t* smem_a, uint8_t* smem_b,
                                        uint8_t* smem_d, uint64_t* full, uint64_t* empty,
                                        const ptx::TensorMap* tmap_d) {
  ptx::setmaxnreg_increase<kMathRegisters<C>>();
  constexpr uint32_t kNumStages = C::kNumStages;
  constexpr bool kMasked = C::kLayout == Layout::Masked;
  const uint32_t warpgroup = threadIdx.x / 128;
  const uint32_t wg_row = warpgroup / C::kWarpgroupCols;
  const uint32_t wg_col = warpgroup % C::kWarpgroupCols;
  const uint32_t lane = threadIdx.x % 32;
  // This thread's accumulator rows in the warpgroup's 64 rows: r and r + 8 (the wgmma fragment layout).
  const uint32_t row_in_wg = (threadIdx.x / 32 % 4) * 16 + lane / 4;
  // Shared memory ends below 256 KiB, so stepping a descriptor's 14-bit address field never carries over.
  const uint64_t desc_a_base =
      ptx::smem_descriptor_k_major_sw128(ptx::smem_address(smem_a) + wg_row * 64 * C::kBlockK);
  const uint64_t desc_b_base =
      ptx::smem_descriptor_k_major_sw128(ptx::smem_address(smem_b) + wg_col * C::kWgmmaN * C::kBlockK);
  uint8_t* staging = smem_d + warpgroup * C::kSmemDPerWarpgroup;

  float partial[C::kWgmmaN / 2] = {};
  float partial2[C::kTwoPartials ? C::kWgmmaN / 2 : 1] = {};
  float acc[C::kWgmmaN / 2];
  uint32_t issue_stage = 0, issue_phase = 0, release_stage = 0;

  Tile tile;
  while (scheduler.next(tile)) {
    const bool group_valid = tile.group < params.num_groups;
    const uint32_t group = group_valid ? tile.group : 0;
    const uint32_t m_base = tile.m_block * C::kBlockM + wg_row * 64;
    const uint32_t n_base = tile.n_block * C::kBlockN + wg_col * C::kWgmmaN;
    const uint32_t row0 = m_base + row_in_wg, row1 = row0 + 8;
    const uint32_t rows = tile.rows;
    // The experts of this thread's two rows (contiguous layout), read now for the epilogue, so that the
    // loads' latency hides behind the K loop.
    int32_t row_experts[2] = {-1, -1};
    if constexpr (C::kLayout == Layout::Contiguous) {
      if (row0 < params.m) row_experts[0] = params.m_indices[row0];
      if (row1 < params.m) row_experts[1] = params.m_indices[row1];
    }

    // Scale pointers, stepped along K block by block. A row past the end reads row 0's scales: its A row is
    // TMA zero fill, or a row of the masked layout that is never stored.
    const float* sfa_group = params.sfa + group * params.sfa_group_stride;
    const float* sfa0 = sfa_group + (row0 < rows ? row0 : 0) * params.sfa_m_stride;
    const float* sfa1 = sfa_group + (row1 < rows ? row1 : 0) * params.sfa_m_stride;
    // A warpgroup wholly past N reads the last block's scales; its columns are never stored.
    const uint32_t nb0 = min_of(n_base / 128, C::kNumNBlocksOfB - 1);
    const uint32_t nb1 = min_of(nb0 + 1, C::kNumNBlocksOfB - 1);
    const uint32_t first_block_cols = 128 - n_base % 128;  // columns [0, this) use nb0, the rest nb1
    const float* sfb0 = params.sfb + group * params.sfb_group_stride + nb0 * params.sfb_n_stride;
    const float* sfb1 = params.sfb + group * params.sfb_group_stride + nb1 * params.sfb_n_stride;
    const int64_t sfa_k_stride = params.sfa_k_stride, sfb_k_stride = params.sfb_k_stride;

    // The scales of the next block, read from global memory while the current block's MMAs run: sfa of rows 0
    // and 1, sfb of the two scale blocks the columns may touch.
    struct Scales {
      float a0, a1, b0, b1;
    };
    auto load_next_scales = [&]() {
      const float b0 = ptx::load_readonly(sfb0);
      const Scales next{ptx::load_readonly(sfa0), ptx::load_readonly(sfa1), b0,
                        C::kUniformScaleB ? b0 : ptx::load_readonly(sfb1)};
      sfa0 += sfa_k_stride, sfa1 += sfa_k_stride, sfb0 += sfb_k_stride, sfb1 += sfb_k_stride;
      return next;
    };
    // Waits for the next block's stage and starts its four MMAs (128 of K) into `p`.
    auto issue = [&](float (&p)[C::kWgmmaN / 2]) {
      ptx::mbarrier_wait(&full[issue_stage], issue_phase);
#pragma unroll
      for (uint32_t i = 0; i < C::kWgmmaN / 2; ++i) ptx::fence_operand(p[i]);
      ptx::wgmma_fence();
      // Descriptors address shared memory in 16-byte units: step them from the stage's first one.
      const uint64_t desc_a = desc_a_base + issue_stage * (C::kSmemA / 16);
      const uint64_t desc_b = desc_b_base + issue_stage * (C::kSmemB / 16);
#pragma unroll
      for (uint32_t kk = 0; kk < C::kBlockK / 32; ++kk) Wgmma::mma(p, desc_a + kk * 2, desc_b + kk * 2, kk > 0);
      ptx::wgmma_commit_group();
      if (++issue_stage == kNumStages) issue_stage = 0, issue_phase ^= 1;
    };
    // Once the MMAs of `p` are complete: frees their stage for the producer and promotes the partial sums.
    auto retire = [&](float (&p)[C::kWgmmaN / 2], const Scales& s) {
#pragma unroll
      for (uint32_t i = 0; i < C::kWgmmaN / 2; ++i) ptx::fence_operand(p[i]);
      __syncwarp();
      if (lane == 0) {
        if constexpr (C::kClusterSize > 1) {
#pragma unroll
          for (uint32_t cta = 0; cta < C::kClusterSize; ++cta) ptx::mbarrier_arrive_cluster(&empty[release_stage], cta);
        } else {
          ptx::mbarrier_arrive(&empty[release_stage]);
        }
      }
      if (++release_stage == kNumStages) release_stage = 0;
      // Fragment i holds row (i / 2 % 2 ? row1 : row0), column (i / 4) * 8 + (lane % 4) * 2 + i % 2.
      const float scale00 = s.a0 * s.b0, scale10 = s.a1 * s.b0, scale01 = s.a0 * s.b1, scale11 = s.a1 * s.b1;
#pragma unroll
      for (uint32_t j = 0; j < C::kWgmmaN / 8; ++j) {
        const bool first_block = C::kUniformScaleB || j * 8 < first_block_cols;
        const float scale_row0 = first_block ? scale00 : scale01;
        const float scale_row1 = first_block ? scale10 : scale11;
        acc[4 * j + 0] = fmaf(p[4 * j + 0], scale_row0, acc[4 * j + 0]);
        acc[4 * j + 1] = fmaf(p[4 * j + 1], scale_row0, acc[4 * j + 1]);
        acc[4 * j + 2] = fmaf(p[4 * j + 2], scale_row1, acc[4 * j + 2]);
        acc[4 * j + 3] = fmaf(p[4 * j + 3], scale_row1, acc[4 * j + 3]);
      }
    };

#pragma unroll
    for (uint32_t i = 0; i < C::kWgmmaN / 2; ++i) acc[i] = 0.0f;

    Scales scales = load_next_scales();
    if constexpr (C::kTwoPartials) {
      // Block kb is promoted while the MMAs of block kb + 1 run, into the other partial accumulator. Each
      // step starts with block kb complete in `current` and ends once block kb + 1 is complete in `next`:
      // with no MMA in flight across the loop's back edge, ptxas can prove that the promotion reads no
      // accumulator an MMA is writing, and keeps the MMAs asynchronous (otherwise it serializes them, C7514).
      auto step = [&](float (&current)[C::kWgmmaN / 2], float (&next)[C::kWgmmaN / 2]) {
        const Scales next_scales = load_next_scales();
        issue(next);
        retire(current, scales);
        ptx::wgmma_wait_group<0>();
        scales = next_scales;
      };
      issue(partial);
      ptx::wgmma_wait_group<0>();
      for (uint32_t kb = 0; kb + 2 < C::kNumKBlocks; kb += 2) {
        step(partial, partial2);
        step(partial2, partial);
      }
      if constexpr (C::kNumKBlocks % 2 == 0) {
        step(partial, partial2);
        retire(partial2, scales);
      } else {
        retire(partial, scales);
      }
    } else {
      // One partial accumulator: the other warpgroups' MMAs keep the tensor cores busy during a promotion.
      for (uint32_t kb = 0; kb < C::kNumKBlocks; ++kb) {
        issue(partial);
        const Scales next = kb + 1 < C::kNumKBlocks ? load_next_scales() : scales;
        ptx::wgmma_wait_group<0>();
        retire(partial, scales);
        scales = next;
      }
    }

    // ---------------------------------------------------------------- epilogue
    if (!tile.valid) continue;  // a filler tile that kept a cluster partner company
    if constexpr (C::kHasC) {
#pragma unroll
      for (uint32_t i = 0; i < C::kWgmmaN / 2; ++i) {
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
    // Rows past the end of A count as full: TMA clips them.
    const bool clipped_by_tma = !C::kRaggedN || n_base + C::kWgmmaN <= C::kShapeN;
    const bool full_tile = ptx::named_barrier_and(
        1 + warpgroup, 128,
        clipped_by_tma && (actions[0] == RowAction::Write || row0 >= params.m) &&
            (actions[1] == RowAction::Write || row1 >= params.m));
    if (full_tile) {
      Epilogue<C>::through_tma(acc, staging, 1 + warpgroup, [&](const uint8_t* chunk, uint32_t chunk_col) {
        if constexpr (kMasked)
          ptx::tma_store_3d(tmap_d, chunk, n_base + chunk_col, m_base, group);
        else
          ptx::tma_store_2d(tmap_d, chunk, n_base + chunk_col, m_base);
      });
    } else if (n_base < C::kShapeN) {
      const int64_t offset = group * params.d_group_stride + m_base * params.d_row_stride + n_base;
      void* d = static_cast<uint8_t*>(params.d) + offset * C::kOutputBytes;
      Epilogue<C>::direct(acc, d, params.d_row_stride, C::kShapeN - n_base, actions);
    }
  }
  if (threadIdx.x % 128 == 0) ptx::bulk_wait_group_all();
}

template <class Config, class Wgmma>
__device__ __forceinline__ void fp8_gemm(const GemmParams& params, const ptx::TensorMap* tmap_a,
                                         const ptx::TensorMap* tmap_b, const ptx::TensorMap* tmap_d) {
  using C = Config;
  static_assert(Wgmma::N == C::kWgmmaN, "the wgmma shape matches the configuration");
  constexpr uint32_t kNumStages = C::kNumStages;

  extern __shared__ uint8_t dynamic_smem[];
  uint8_t* smem = dynamic_smem + ((1024 - ptx::smem_address(dynamic_smem) % 1024) % 1024);
  uint8_t* smem_d = smem;
  uint8_t* smem_a = smem_d + C::kNumMathWarpgroups * C::kSmemDPerWarpgroup;
  uint8_t* smem_b = smem_a + kNumStages * C::kSmemA;
  uint64_t* full = reinterpret_cast<uint64_t*>(smem_b + kNumStages * C::kSmemB);
  uint64_t* empty = full + kNumStages;

  constexpr uint32_t kProducerThread = C::kNumMathWarpgroups * 128;
  if (threadIdx.x == kProducerThread) {
    ptx::prefetch_tensor_map(tmap_a);
    ptx::prefetch_tensor_map(tmap_b);
    ptx::prefetch_tensor_map(tmap_d);
    for (uint32_t s = 0; s < kNumStages; ++s) {
      ptx::mbarrier_init(&full[s], 1);
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
    if (threadIdx.x == kProducerThread) produce<C>(scheduler, rank, smem_a, smem_b, full, empty, tmap_a, tmap_b);
  } else {
    consume<C, Wgmma>(params, scheduler, smem_a, smem_b, smem_d, full, empty, tmap_d);
  }
  // A CTA leaves only when its peers no longer write to its shared memory or arrive on its barriers.
  if constexpr (C::kClusterSize > 1) ptx::cluster_sync();
}

}  // namespace fgemm::sm90
