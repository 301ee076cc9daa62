// The sm90 FP8 GEMM with fine-grained scaling: D = A * B^T (+ C), A and B in E4M3, K contiguous, in the
// normal, m-grouped contiguous and m-grouped masked layouts (one kernel body, the layout a template value).
//
// One CTA per SM walks its tiles (persistent). Three warpgroups:
//   - the producer (warpgroup 2): one thread streams 128-wide K blocks of A and B through a ring of
//     kNumStages shared-memory stages with TMA, each stage guarded by a "full" and an "empty" mbarrier;
//   - two math warpgroups: each owns a 64 x kWgmmaN part of the tile, multiplies a K block with four
//     wgmma m64nNk32 into FP32 registers ("partial"), then promotes: acc += partial * sfa * sfb.
// Hopper's FP8 tensor cores keep only about 14 bits of the running sum, so the sum over one K block is
// taken from the tensor cores and scaled into a full FP32 accumulator on the CUDA cores; while one
// warpgroup promotes, the other's MMAs keep the tensor cores busy.
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
          bool kOutputF32_, bool kHasC_, uint32_t kSwizzleDBytes_, uint32_t kBandM_, Layout kLayout_>
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

  // Two math warpgroups split the tile along M (BLOCK_M 128) or along N (BLOCK_M 64).
  static constexpr uint32_t kNumMathWarpgroups = 2;
  static constexpr uint32_t kWarpgroupRows = kBlockM / 64;
  static constexpr uint32_t kWarpgroupCols = kNumMathWarpgroups / kWarpgroupRows;
  static constexpr uint32_t kWgmmaN = kBlockN / kWarpgroupCols;
  static constexpr uint32_t kNumThreads = 128 * (kNumMathWarpgroups + 1);
  static constexpr uint32_t kNumKBlocks = ceil_div(kShapeK, kBlockK);
  static constexpr uint32_t kNumNBlocksOfB = ceil_div(kShapeN, 128u);
  // A warpgroup's columns lie in one 128-row block of B's scales, so one sfb value serves them all.
  static constexpr bool kUniformScaleB = 128 % kWgmmaN == 0;

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

  static_assert(kBlockM == 64 || kBlockM == 128, "BLOCK_M is 64 or 128");
  static_assert(kWgmmaN % 8 == 0 && kWgmmaN >= 8 && kWgmmaN <= 256, "wgmma N is a multiple of 8 in [8, 256]");
  static_assert(kBlockN % kWarpgroupCols == 0, "BLOCK_N splits evenly between the warpgroups");
  static_assert(kWgmmaN * kOutputBytes % 16 == 0, "staged rows of D are whole 16-byte units");
  static_assert(kWgmmaN % kChunkCols == 0, "the swizzle width divides the warpgroup's columns");
  static_assert(!kHasC || kLayout == Layout::Normal, "C is added in the normal layout only");
};

// Registers: the producer needs few, the math warpgroups hold two accumulators each.
constexpr uint32_t kProducerRegisters = 40;
constexpr uint32_t kMathRegisters = 232;

template <class Config, class Wgmma>
__device__ __forceinline__ void fp8_gemm(const GemmParams& params, const ptx::TensorMap* tmap_a,
                                         const ptx::TensorMap* tmap_b, const ptx::TensorMap* tmap_d) {
  using C = Config;
  static_assert(Wgmma::N == C::kWgmmaN, "the wgmma shape matches the configuration");
  constexpr uint32_t kNumStages = C::kNumStages;
  constexpr bool kMasked = C::kLayout == Layout::Masked;
  constexpr bool kGroupedB = C::kLayout != Layout::Normal;

  extern __shared__ uint8_t dynamic_smem[];
  uint8_t* smem = dynamic_smem + ((1024 - ptx::smem_address(dynamic_smem) % 1024) % 1024);
  uint8_t* smem_d = smem;
  uint8_t* smem_a = smem_d + C::kNumMathWarpgroups * C::kSmemDPerWarpgroup;
  uint8_t* smem_b = smem_a + kNumStages * C::kSmemA;
  uint64_t* full = reinterpret_cast<uint64_t*>(smem_b + kNumStages * C::kSmemB);
  uint64_t* empty = full + kNumStages;

  const uint32_t warpgroup = threadIdx.x / 128;
  constexpr uint32_t kProducerThread = C::kNumMathWarpgroups * 128;
  if (threadIdx.x == kProducerThread) {
    ptx::prefetch_tensor_map(tmap_a);
    ptx::prefetch_tensor_map(tmap_b);
    ptx::prefetch_tensor_map(tmap_d);
    for (uint32_t s = 0; s < kNumStages; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], C::kNumMathWarpgroups * 4);  // one arrival per math warp
    }
    ptx::fence_barrier_init();
  }
  __syncthreads();

  Scheduler<C::kLayout, C::kBlockM, C::kBlockN, C::kShapeN, C::kBandM> scheduler(
      params.m, params.num_groups, params.m_indices, params.masked_m, blockIdx.x, gridDim.x);
  Tile tile;

  if (warpgroup == C::kNumMathWarpgroups) {
    // ---------------------------------------------------------------- producer
    ptx::setmaxnreg_decrease<kProducerRegisters>();
    if (threadIdx.x != kProducerThread) return;
    uint32_t stage = 0, phase = 0;
    while (scheduler.next(tile)) {
      // An out-of-range expert (a bad m_indices entry) reads expert 0; its rows are written as NaN.
      const uint32_t group = tile.group < params.num_groups ? tile.group : 0;
      const int32_t m0 = tile.m_block * C::kBlockM, n0 = tile.n_block * C::kBlockN;
      for (uint32_t kb = 0; kb < C::kNumKBlocks; ++kb) {
        const int32_t k0 = kb * C::kBlockK;
        ptx::mbarrier_wait(&empty[stage], phase ^ 1);
        ptx::mbarrier_arrive_expect_tx(&full[stage], C::kSmemA + C::kSmemB);
        uint8_t* a_dst = smem_a + stage * C::kSmemA;
        uint8_t* b_dst = smem_b + stage * C::kSmemB;
        if constexpr (kMasked)
          ptx::tma_load_3d(a_dst, tmap_a, &full[stage], k0, m0, group);
        else
          ptx::tma_load_2d(a_dst, tmap_a, &full[stage], k0, m0);
        if constexpr (kGroupedB)
          ptx::tma_load_3d(b_dst, tmap_b, &full[stage], k0, n0, group);
        else
          ptx::tma_load_2d(b_dst, tmap_b, &full[stage], k0, n0);
        if (++stage == kNumStages) stage = 0, phase ^= 1;
      }
    }
    return;
  }

  // ------------------------------------------------------------------ math warpgroups
  ptx::setmaxnreg_increase<kMathRegisters>();
  const uint32_t wg_row = warpgroup / C::kWarpgroupCols;
  const uint32_t wg_col = warpgroup % C::kWarpgroupCols;
  const uint32_t lane = threadIdx.x % 32;
  // This thread's accumulator rows in the warpgroup's 64 rows: r and r + 8 (the wgmma fragment layout).
  const uint32_t row_in_wg = (threadIdx.x / 32 % 4) * 16 + lane / 4;
  const uint32_t smem_a_base = ptx::smem_address(smem_a) + wg_row * 64 * C::kBlockK;
  const uint32_t smem_b_base = ptx::smem_address(smem_b) + wg_col * C::kWgmmaN * C::kBlockK;
  uint8_t* staging = smem_d + warpgroup * C::kSmemDPerWarpgroup;

  float partial[C::kWgmmaN / 2] = {};
  float acc[C::kWgmmaN / 2];
  uint32_t stage = 0, phase = 0;

  while (scheduler.next(tile)) {
    const bool group_valid = tile.group < params.num_groups;
    const uint32_t group = group_valid ? tile.group : 0;
    const uint32_t m_base = tile.m_block * C::kBlockM + wg_row * 64;
    const uint32_t n_base = tile.n_block * C::kBlockN + wg_col * C::kWgmmaN;
    const uint32_t row0 = m_base + row_in_wg, row1 = row0 + 8;
    const uint32_t rows = kMasked ? scheduler.masked_rows(group) : params.m;

    // Scale pointers: rows outside A read nothing (their scale is 0 and their A rows are TMA zero fill).
    const float* sfa_group = params.sfa + group * params.sfa_group_stride;
    const float* sfa0 = row0 < rows ? sfa_group + row0 * params.sfa_m_stride : nullptr;
    const float* sfa1 = row1 < rows ? sfa_group + row1 * params.sfa_m_stride : nullptr;
    // A warpgroup wholly past N reads the last block's scales; its columns are never stored.
    const uint32_t nb0 = min_of(n_base / 128, C::kNumNBlocksOfB - 1);
    const uint32_t nb1 = min_of(nb0 + 1, C::kNumNBlocksOfB - 1);
    const uint32_t first_block_cols = 128 - n_base % 128;  // columns [0, this) use nb0, the rest nb1
    const float* sfb0 = params.sfb + group * params.sfb_group_stride + nb0 * params.sfb_n_stride;
    const float* sfb1 = params.sfb + group * params.sfb_group_stride + nb1 * params.sfb_n_stride;
    auto load_scales = [&](uint32_t kb, float& a0, float& a1, float& b0, float& b1) {
      const int64_t ka = kb * params.sfa_k_stride, kbb = kb * params.sfb_k_stride;
      a0 = sfa0 ? ptx::load_readonly(sfa0 + ka) : 0.0f;
      a1 = sfa1 ? ptx::load_readonly(sfa1 + ka) : 0.0f;
      b0 = ptx::load_readonly(sfb0 + kbb);
      b1 = C::kUniformScaleB ? b0 : ptx::load_readonly(sfb1 + kbb);
    };
    float sa0, sa1, sb0, sb1;
    load_scales(0, sa0, sa1, sb0, sb1);

#pragma unroll
    for (uint32_t i = 0; i < C::kWgmmaN / 2; ++i) acc[i] = 0.0f;

    for (uint32_t kb = 0; kb < C::kNumKBlocks; ++kb) {
      ptx::mbarrier_wait(&full[stage], phase);
#pragma unroll
      for (uint32_t i = 0; i < C::kWgmmaN / 2; ++i) ptx::fence_operand(partial[i]);
      ptx::wgmma_fence();
#pragma unroll
      for (uint32_t kk = 0; kk < C::kBlockK / 32; ++kk) {
        const uint64_t desc_a = ptx::smem_descriptor_k_major_sw128(smem_a_base + stage * C::kSmemA + kk * 32);
        const uint64_t desc_b = ptx::smem_descriptor_k_major_sw128(smem_b_base + stage * C::kSmemB + kk * 32);
        Wgmma::mma(partial, desc_a, desc_b, kk > 0);
      }
      ptx::wgmma_commit_group();

      // Fetch the next block's scales while the tensor cores work.
      float next_sa0 = 0.0f, next_sa1 = 0.0f, next_sb0 = 0.0f, next_sb1 = 0.0f;
      if (kb + 1 < C::kNumKBlocks) load_scales(kb + 1, next_sa0, next_sa1, next_sb0, next_sb1);

      ptx::wgmma_wait_group<0>();
#pragma unroll
      for (uint32_t i = 0; i < C::kWgmmaN / 2; ++i) ptx::fence_operand(partial[i]);
      __syncwarp();
      if (lane == 0) ptx::mbarrier_arrive(&empty[stage]);
      if (++stage == kNumStages) stage = 0, phase ^= 1;

      // Promotion. Fragment i holds row (i / 2 % 2 ? row1 : row0), column (i / 4) * 8 + (lane % 4) * 2 + i % 2.
      const float scale00 = sa0 * sb0, scale10 = sa1 * sb0, scale01 = sa0 * sb1, scale11 = sa1 * sb1;
#pragma unroll
      for (uint32_t j = 0; j < C::kWgmmaN / 8; ++j) {
        const bool first_block = C::kUniformScaleB || j * 8 < first_block_cols;
        const float scale_row0 = first_block ? scale00 : scale01;
        const float scale_row1 = first_block ? scale10 : scale11;
        acc[4 * j + 0] = fmaf(partial[4 * j + 0], scale_row0, acc[4 * j + 0]);
        acc[4 * j + 1] = fmaf(partial[4 * j + 1], scale_row0, acc[4 * j + 1]);
        acc[4 * j + 2] = fmaf(partial[4 * j + 2], scale_row1, acc[4 * j + 2]);
        acc[4 * j + 3] = fmaf(partial[4 * j + 3], scale_row1, acc[4 * j + 3]);
      }
      sa0 = next_sa0, sa1 = next_sa1, sb0 = next_sb0, sb1 = next_sb1;
    }

    // ---------------------------------------------------------------- epilogue
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
    RowAction actions[2] = {RowAction::Write, RowAction::Write};
    if constexpr (C::kLayout == Layout::Contiguous) {
      const uint32_t row_of[2] = {row0, row1};
      for (uint32_t half = 0; half < 2; ++half) {
        const int32_t expert = row_of[half] < params.m ? params.m_indices[row_of[half]] : -1;
        actions[half] = expert == -1 ? RowAction::Skip
                        : group_valid && static_cast<uint32_t>(expert) == tile.group ? RowAction::Write
                                                                                      : RowAction::WriteNaN;
      }
    } else if constexpr (kMasked) {
      actions[0] = row0 < rows ? RowAction::Write : RowAction::Skip;
      actions[1] = row1 < rows ? RowAction::Write : RowAction::Skip;
    }
    // Rows past the end of A count as full: TMA clips them.
    const bool full_tile = ptx::named_barrier_and(
        1 + warpgroup, 128,
        (actions[0] == RowAction::Write || row0 >= params.m) && (actions[1] == RowAction::Write || row1 >= params.m));
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

}  // namespace fgemm::sm90
