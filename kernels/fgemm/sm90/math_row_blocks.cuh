// The per-K-block math of the FP8 1D1D recipe (weight gradients): A and B both scaled per 1 x 128 block along K,
// sfa (m, kb) and sfb (n, kb). Each K block's sum is taken from the tensor cores into a partial accumulator and
// promoted on the CUDA cores: acc += partial * (sfa[row] * sfb[column]), a scale for every element.
//
// The K block's scales of the tile's rows and columns travel with the stage: the TMA thread loads both where
// they are MN-major with 16-byte aligned columns (what the layers and DeepGEMM's
// get_mn_major_tma_aligned_tensor give); otherwise the producer's helper warp copies them value by value. A
// promotion reads its K block's scales from the block's stage, which goes back to the producer once the block is
// promoted. Two schedules (row_blocks::two_partials):
//   - two math warpgroups: two partial accumulators; a warpgroup promotes one K block while the next block's MMAs
//     run into the other, and gives the first block's stage back one block late;
//   - three math warpgroups (BLOCK_M 192): one partial accumulator; a warpgroup promotes each K block once its
//     MMAs are complete, while the other two warpgroups' MMAs keep the tensor cores busy.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/gemm_params.cuh"
#include "fgemm/ptx.cuh"
#include "fgemm/sm90/row_blocks_plan.cuh"
#include "fgemm/sm90/stage_ring.cuh"

namespace fgemm::sm90 {

template <class C, class Mma_, bool kScalesByTma>
struct RowBlocksMath {
  using Mma = Mma_;  // E4M3 x E4M3 into FP32
  static constexpr uint32_t kStageExtraBytes = row_blocks::stage_extra_bytes(C::kTile);
  static constexpr uint32_t kSfbOffset = row_blocks::sfa_bytes(C::kTile);
  static constexpr uint32_t kTmaExtraBytes = kScalesByTma ? (C::kBlockM + C::kBlockN) * 4 : 0;
  static constexpr uint32_t kHelperArrivals = kScalesByTma ? 0 : 32;
  static constexpr bool kTwoPartials = row_blocks::two_partials(C::kTile);
  // With two partial accumulators the K blocks alternate between them: a block's step depends on its parity.
  static constexpr uint32_t kStepPeriod = kTwoPartials ? 2 : 1;
  static constexpr RegisterSplit kRegisters = row_blocks::register_split(C::kTile);
  static constexpr uint32_t kFragments = C::kWarpgroupN / 2;

  static_assert(Mma::N == C::kWarpgroupN, "one wgmma covers a warpgroup's columns");
  static_assert(C::kWarpgroupN <= row_blocks::kMaxWarpgroupN,
                "the partials and the accumulators fit the registers");
  static_assert(C::kBlockK == 128, "one K block is one 128-wide block of scales");
  static_assert(!C::kAlternateKBlocks, "each warpgroup reads its own columns' scales of B from every stage");

  // ------------------------------------------------------------------ producer side

  // The TMA thread, with the stage's A and B: the K block's scales of the tile's rows and columns. Rows and
  // columns past the ends read as zero: their rows of A and B are zero fill too, or are never stored.
  __device__ __forceinline__ static void load_with_stage(uint8_t* stage_extra, const ScaleMaps& maps, uint64_t* full,
                                                         uint32_t m0, uint32_t n0, uint32_t kb, uint32_t) {
    if constexpr (kScalesByTma) {
      ptx::tma_load_2d(stage_extra, maps.sfa, full, m0, kb);
      ptx::tma_load_2d(stage_extra + kSfbOffset, maps.sfb, full, n0, kb);
    }
  }

  // The helper warp of the producer warpgroup, for scales the TMA cannot load: copies every K block's scales of
  // the tile's rows and columns into its stage with cp.async, whose completion counts as the warp's 32 arrivals
  // on the stage's full barrier. A row or column past the end reads the first one's: it is never stored.
  template <class Scheduler>
  __device__ __forceinline__ static void help_producer(const GemmParams& params, Scheduler scheduler,
                                                       uint8_t* smem_extra, uint64_t* full, uint64_t* empty) {
    if constexpr (!kScalesByTma) {
      const uint32_t lane = threadIdx.x % 32;
      fill_stages<C>(scheduler, empty, [&](const Tile& tile, uint32_t, uint32_t kb, uint32_t stage) {
        uint8_t* scales = smem_extra + stage * kStageExtraBytes;
        const uint32_t m0 = tile.m_block * C::kBlockM, n0 = tile.n_block * C::kBlockN;
        // One loop over the tile's rows, then its columns: two would take the producer more registers.
#pragma unroll 1
        for (uint32_t i = lane; i < C::kBlockM + C::kBlockN; i += 32) {
          const bool of_a = i < C::kBlockM;
          const uint32_t index = of_a ? m0 + i : n0 + (i - C::kBlockM);
          const uint32_t valid = of_a ? (index < tile.rows ? index : 0) : (index < C::kShapeN ? index : 0);
          const float* src = of_a ? params.sfa + valid * params.sfa_m_stride + kb * params.sfa_k_stride
                                  : params.sfb + valid * params.sfb_n_stride + kb * params.sfb_k_stride;
          float* dst = reinterpret_cast<float*>(scales + (of_a ? i * 4 : kSfbOffset + (i - C::kBlockM) * 4));
          ptx::cp_async_4(dst, src);
        }
        ptx::cp_async_mbarrier_arrive(&full[stage]);
      });
    }
  }

  // ------------------------------------------------------------------ math side: one per math thread

  float partial[kFragments];                       // the sums of the tile's even K blocks (of every one with one)
  float partial2[kTwoPartials ? kFragments : 1];  // of its odd ones
  float acc[kFragments];
  uint32_t sfa_address;  // this thread's first row's scale in stage 0 (its second row's is 8 rows on)
  uint32_t sfb_address;  // this thread's first column pair's scales in stage 0
  // Two partials: the tile's last K block so far, whose promotion is pending: its stage and parity, and whether
  // there is one (a k-grouped expert may have no K block).
  uint32_t last_stage;
  bool last_odd;
  bool pending;

  // Fragment i of a thread holds row (i / 2 % 2 ? row1 : row0) of the warpgroup and its column
  // (i / 4) * 8 + (lane % 4) * 2 + i % 2: the thread's scales of B are pairs, 8 columns apart.
  __device__ __forceinline__ RowBlocksMath(const GemmParams&, const uint8_t* smem_extra, uint32_t wg_row,
                                           uint32_t row_in_wg, uint32_t)
      : sfa_address(ptx::smem_address(smem_extra) + (wg_row * 64 + row_in_wg) * 4),
        sfb_address(ptx::smem_address(smem_extra) + kSfbOffset +
                    ((threadIdx.x / 128 % C::kWarpgroupCols) * C::kWarpgroupN + threadIdx.x % 4 * 2) * 4) {}

  __device__ __forceinline__ void begin_tile(uint32_t, uint32_t, uint32_t) {
#pragma unroll
    for (uint32_t i = 0; i < kFragments; ++i) acc[i] = 0.0f;
    pending = false;
  }

  // acc += p * sfa * sfb with the scales in stage `stage`, whose K block's sums p holds; then the stage goes back.
  template <class Pipe>
  __device__ __forceinline__ void promote(const Pipe& pipe, float (&p)[kFragments], uint32_t stage) {
#pragma unroll
    for (uint32_t i = 0; i < kFragments; ++i) ptx::fence_operand(p[i]);
    const uint32_t sfa = sfa_address + stage * kStageExtraBytes;
    const float a0 = ptx::load_shared_f32(sfa), a1 = ptx::load_shared_f32(sfa + 8 * 4);
#pragma unroll
    for (uint32_t j = 0; j < kFragments / 4; ++j) {
      float b0, b1;
      ptx::load_shared_f32x2(sfb_address + stage * kStageExtraBytes + j * 8 * 4, b0, b1);
      acc[4 * j + 0] = fmaf(p[4 * j + 0], a0 * b0, acc[4 * j + 0]);
      acc[4 * j + 1] = fmaf(p[4 * j + 1], a0 * b1, acc[4 * j + 1]);
      acc[4 * j + 2] = fmaf(p[4 * j + 2], a1 * b0, acc[4 * j + 2]);
      acc[4 * j + 3] = fmaf(p[4 * j + 3], a1 * b1, acc[4 * j + 3]);
    }
    stage_loads_done();
    pipe.release(stage);
  }

  // One K block, kb = round * kNumStages + stage, `odd` its parity. With two partials, its MMAs run into the
  // partial of its parity while block kb - 1 is promoted from the other, with that block's scales, still in its
  // stage (given back after the promotion). Each step ends with its MMAs complete: with no MMA in flight across a
  // back edge, ptxas can prove that no promotion reads an accumulator an MMA is writing, and keeps the MMAs
  // asynchronous (otherwise it serializes them, C7514). With one, the block is promoted once its MMAs are complete.
  template <class Pipe>
  __device__ __forceinline__ void step(const Pipe& pipe, uint32_t stage, uint32_t round, bool odd) {
    pipe.wait(stage, round);
    if constexpr (kTwoPartials) {
      const uint32_t previous_stage = (stage + C::kNumStages - 1) % C::kNumStages;
      const bool first = round == 0 && stage == 0;
      if (odd) {
        pipe.multiply(partial2, stage, 0, false);
        if (!first) promote(pipe, partial, previous_stage);
      } else {
        pipe.multiply(partial, stage, 0, false);
        if (!first) promote(pipe, partial2, previous_stage);
      }
      ptx::wgmma_wait_group<0>();
      last_stage = stage;
      last_odd = odd;
      pending = true;
    } else {
      pipe.multiply(partial, stage, 0, false);
      ptx::wgmma_wait_group<0>();
      promote(pipe, partial, stage);
    }
  }

  // After the tile's last K block: its promotion, where it is pending (two partials; no MMA is in flight, so the
  // partial may be chosen at run time).
  template <class Pipe>
  __device__ __forceinline__ void end_tile(const Pipe& pipe) {
    if constexpr (kTwoPartials) {
      if (!pending) return;
      if (last_odd)
        promote(pipe, partial2, last_stage);
      else
        promote(pipe, partial, last_stage);
    }
  }
};

}  // namespace fgemm::sm90
