// The per-K-block math of DeepSeek-V3's block recipe: A scaled per 1 x 128 (sfa), B per 128 x 128 (sfb), for
// FP8 E4M3 and for INT8. The sum over one K block is taken from the tensor cores into a "partial" accumulator
// and promoted on the CUDA cores into the FP32 accumulator: acc += partial * sfa * sfb. FP8's tensor cores keep
// only about 14 bits of a running sum, so its promotion once per block is what keeps the sum accurate; INT8's
// partial is the block's exact INT32 sum. Where registers allow, each warpgroup has two partial accumulators
// and promotes one block while its next block's MMAs run; otherwise the other warpgroups' MMAs keep the tensor
// cores busy during a promotion (a warpgroup of 256 columns promotes each half of its columns in turn).
//
// The scales of A travel with the stage: the TMA thread loads them with A where sfa is MN-major with 16-byte
// aligned columns; otherwise a helper warp of the producer copies them scale by scale (about a tenth slower).
// The math threads read sfb, one or two values per K block, from global memory while the block's MMAs run.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/gemm_params.cuh"
#include "fgemm/ptx.cuh"
#include "fgemm/sm90/block_scaled_plan.cuh"
#include "fgemm/sm90/stage_ring.cuh"

namespace fgemm::sm90 {

// The FP32 value of a partial sum: FP8's as it is; INT8's exact INT32 sum of one K block, at most 128 * 128 * 128
// = 2^21 in magnitude and so exact in FP32. sm_90 converts it with one I2FP (older GPUs' I2F ran at a quarter of
// the FP32 rate): on an H100 the INT8 block GEMMs ran 4-11% faster with it than with the exact conversion through
// an integer and an FP32 add (x + 0x4B400000 read as FP32, less 1.5 * 2^23; docs/PERFORMANCE.md).
__device__ __forceinline__ float partial_value(float p) { return p; }
__device__ __forceinline__ float partial_value(int32_t p) { return __int2float_rn(p); }

template <class C, class Mma_, bool kSfaByTma>
struct BlockScaledMath {
  using Mma = Mma_;  // the wgmma instruction: E4M3 x E4M3 into FP32, or INT8 x INT8 into INT32
  using Partial = typename Mma::Accumulator;
  static constexpr uint32_t kStageExtraBytes = block_scaled::stage_extra_bytes(C::kTile);
  // Bytes the TMA thread loads into a stage beside A and B, and arrivals the helper warp adds to its barrier.
  static constexpr uint32_t kTmaExtraBytes = kSfaByTma ? kStageExtraBytes : 0;
  static constexpr uint32_t kHelperArrivals = kSfaByTma ? 0 : 32;

  static constexpr bool kTwoPartials = block_scaled::two_partials(C::kTile);
  static constexpr uint32_t kColumnHalves = block_scaled::column_halves(C::kTile);
  static constexpr uint32_t kMmaN = block_scaled::mma_n(C::kTile);
  // With two partial accumulators, a K block's step depends on its parity (which partial it fills).
  static constexpr uint32_t kStepPeriod = kTwoPartials ? 2 : 1;
  static constexpr RegisterSplit kRegisters = C::kTile.register_split();
  static constexpr uint32_t kNumNBlocksOfB = ceil_div(C::kShapeN, 128u);
  // A warpgroup's columns lie in one 128-row block of B's scales, so one sfb value serves them all.
  static constexpr bool kUniformScaleB = 128 % C::kWarpgroupN == 0;
  static constexpr uint32_t kFragments = C::kWarpgroupN / 2;
  static constexpr uint32_t kMmaFragments = kMmaN / 2;

  static_assert(Mma::N == kMmaN && Mma::K * C::kTile.operand_bytes == 32, "the wgmma shape matches the plan");
  static_assert(C::kBlockK == 128, "one K block is one 128-wide block of scales");
  static_assert(kMmaN % 8 == 0 && kMmaN >= 8 && kMmaN <= 256, "wgmma N is a multiple of 8 in [8, 256]");
  static_assert(kColumnHalves == 1 || (C::kNumMathWarpgroups == 2 && C::kWarpgroupCols == 1 && kMmaN == 128),
                "only 128 x 256 tiles multiply in column halves, each in one 128-column block of sfb");
  static_assert(block_scaled::spans_at_most_two_scale_blocks(C::kTile),
                "a warpgroup's columns span at most two 128-column scale blocks");

  // ------------------------------------------------------------------ producer side

  // The TMA thread, with the stage's A and B: sfa of the tile's rows for K block kb, where the TMA can load it.
  // Rows past the end of sfa read as zero: their rows of A are zero fill too, or are never stored.
  __device__ __forceinline__ static void load_with_stage(uint8_t* stage_extra, const ScaleMaps& maps, uint64_t* full,
                                                         uint32_t m0, uint32_t, uint32_t kb, uint32_t group) {
    if constexpr (kSfaByTma) {
      float* sfa_dst = reinterpret_cast<float*>(stage_extra);
      if constexpr (C::kLayout == Layout::Masked)
        ptx::tma_load_3d(sfa_dst, maps.sfa, full, m0, kb, group);
      else
        ptx::tma_load_2d(sfa_dst, maps.sfa, full, m0, kb);
    }
  }

  // The helper warp of the producer warpgroup, for sfa the TMA cannot load: copies every K block's scales of the
  // tile's rows into its stage with cp.async, whose completion counts as the warp's 32 arrivals on the stage's
  // full barrier.
  template <class Scheduler>
  __device__ __forceinline__ static void help_producer(const GemmParams& params, Scheduler scheduler,
                                                       uint8_t* smem_extra, uint64_t* full, uint64_t* empty) {
    if constexpr (!kSfaByTma) {
      const uint32_t lane = threadIdx.x % 32;
      float* smem_sfa = reinterpret_cast<float*>(smem_extra);
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
  }

  // ------------------------------------------------------------------ math side: one per math thread

  struct Scales {
    float a0, a1, b0, b1;
  };
  struct ScalesB {
    float b0, b1;
  };

  const GemmParams& params;
  uint32_t sfa_address;  // this thread's first row's scale in stage 0 (its second row's is 8 rows on)
  Partial partial[kMmaFragments];
  Partial partial2[kTwoPartials ? kMmaFragments : 1];
  float acc[kFragments];
  // The tile's scales of B: sfb is addressed by a 32-bit element offset (the host refuses a larger sfb), made
  // warp-uniform through a shuffle: with three math warpgroups, a 64-bit pointer per thread would make ptxas
  // spill in the K loop.
  uint32_t sfb_offset;
  uint32_t sfb_second_block;
  uint32_t first_block_cols;  // columns [0, this) of the warpgroup use the first sfb block, the rest the second
  ScalesB next_sfb;
  Scales scales;  // with two partials: the scales of the block whose promotion is pending
  // The first of the tile's K blocks this warpgroup multiplies (its parity, where the warpgroups alternate).
  uint32_t first_block;

  // The stage buffer of sfa starts at `smem_extra`; this thread's rows are row_in_wg and row_in_wg + 8 of the
  // warpgroup's 64 (the wgmma fragment layout), in warpgroup row wg_row of the tile.
  __device__ __forceinline__ BlockScaledMath(const GemmParams& params, const uint8_t* smem_extra, uint32_t wg_row,
                                                uint32_t row_in_wg, uint32_t k_parity)
      : params(params),
        sfa_address(ptx::smem_address(smem_extra) + (wg_row * 64 + row_in_wg) * 4),
        first_block(k_parity) {}

  // Two math warpgroups have the registers to read sfb a K block ahead, so that its latency hides behind a
  // whole block (4-7% on the masked K = 2048 seed shapes); three read it in the block's own step.
  static constexpr bool kSfbAhead = C::kNumMathWarpgroups == 2;

  __device__ __forceinline__ ScalesB load_sfb(uint32_t kb) const {
    const uint32_t block = sfb_offset + kb * static_cast<uint32_t>(params.sfb_k_stride);
    const float b0 = ptx::load_readonly(params.sfb + block);
    return ScalesB{b0, kUniformScaleB ? b0 : ptx::load_readonly(params.sfb + block + sfb_second_block)};
  }

  // The scales of the tile's K block kb = round * kNumStages + stage: sfa of this thread's rows from the stage, and sfb of
  // the one or two 128-column blocks its warpgroup's columns touch (a warpgroup wholly past N reads the last
  // block's; its columns are never stored).
  __device__ __forceinline__ Scales read_scales(uint32_t stage, uint32_t round) {
    const uint32_t kb = round * C::kNumStages + stage;
    const uint32_t sfa = sfa_address + stage * C::kBlockM * 4;
    const ScalesB sfb = kSfbAhead ? next_sfb : load_sfb(kb);
    if constexpr (kSfbAhead) next_sfb = load_sfb(min_of(kb + C::kWarpgroupKStride, C::kNumKBlocks - 1));
    return Scales{ptx::load_shared_f32(sfa), ptx::load_shared_f32(sfa + 8 * 4), sfb.b0, sfb.b1};
  }

  // A new tile of expert `group` whose warpgroup columns start at n_base, its K loop starting at K block
  // first_k_block of the problem (split-K).
  __device__ __forceinline__ void begin_tile(uint32_t group, uint32_t n_base, uint32_t first_k_block) {
    const uint32_t nb0 = min_of(n_base / 128, kNumNBlocksOfB - 1);
    const uint32_t nb1 = min_of(nb0 + 1, kNumNBlocksOfB - 1);
    sfb_offset = ptx::warp_uniform(static_cast<uint32_t>(group * params.sfb_group_stride + nb0 * params.sfb_n_stride +
                                                         first_k_block * params.sfb_k_stride));
    sfb_second_block = (nb1 - nb0) * static_cast<uint32_t>(params.sfb_n_stride);
    first_block_cols = 128 - n_base % 128;
    if constexpr (kSfbAhead) next_sfb = load_sfb(first_block);
#pragma unroll
    for (uint32_t i = 0; i < kFragments; ++i) acc[i] = 0.0f;
    if constexpr (kTwoPartials) {
      // The first step promotes "block -1": zeros.
      scales = Scales{0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
      for (uint32_t i = 0; i < kMmaFragments; ++i) partial2[i] = 0;
    }
  }

  // acc += p * sfa * sfb, for a complete partial sum `p` of one half of the columns (or all of them).
  __device__ __forceinline__ void promote(Partial (&p)[kMmaFragments], const Scales& s, uint32_t half = 0) {
#pragma unroll
    for (uint32_t i = 0; i < kMmaFragments; ++i) ptx::fence_operand(p[i]);
    // Fragment i of p holds row (i / 2 % 2 ? row1 : row0) and, of the warpgroup's columns, column
    // half * kMmaN + (i / 4) * 8 + (lane % 4) * 2 + i % 2: acc's fragment 4j + i % 4 for its 8-column group j.
    const float scale00 = s.a0 * s.b0, scale10 = s.a1 * s.b0, scale01 = s.a0 * s.b1, scale11 = s.a1 * s.b1;
#pragma unroll
    for (uint32_t jj = 0; jj < kMmaN / 8; ++jj) {
      const uint32_t j = half * (kMmaN / 8) + jj;  // the column group in the warpgroup's columns
      const bool first_block = kUniformScaleB || j * 8 < first_block_cols;
      const float scale_row0 = first_block ? scale00 : scale01;
      const float scale_row1 = first_block ? scale10 : scale11;
      acc[4 * j + 0] = fmaf(partial_value(p[4 * jj + 0]), scale_row0, acc[4 * j + 0]);
      acc[4 * j + 1] = fmaf(partial_value(p[4 * jj + 1]), scale_row0, acc[4 * j + 1]);
      acc[4 * j + 2] = fmaf(partial_value(p[4 * jj + 2]), scale_row1, acc[4 * j + 2]);
      acc[4 * j + 3] = fmaf(partial_value(p[4 * jj + 3]), scale_row1, acc[4 * j + 3]);
    }
  }

  // One K block, kb = round * kNumStages + stage; `odd` is kb % 2.
  template <class Pipe>
  __device__ __forceinline__ void step(const Pipe& pipe, uint32_t stage, uint32_t round, bool odd) {
    if constexpr (kTwoPartials) {
      // Block kb's MMAs run, into the partial accumulator of kb's parity, while block kb - 1 is promoted from
      // the other. Each step ends with its MMAs complete: with no MMA in flight across a back edge, ptxas can
      // prove that no promotion reads an accumulator an MMA is writing, and keeps the MMAs asynchronous
      // (otherwise it serializes them, C7514).
      Partial(&current)[kMmaFragments] = odd ? partial2 : partial;
      Partial(&previous)[kMmaFragments] = odd ? partial : partial2;
      pipe.wait(stage, round);
      pipe.multiply(current, stage, 0, false);
      const Scales current_scales = read_scales(stage, round);
      promote(previous, scales);
      // After the promotion, so that sfa's loads have had its time to complete (stage_ring.cuh).
      stage_loads_done();
      ptx::wgmma_wait_group<0>();
      pipe.release(stage);
      scales = current_scales;
    } else if constexpr (kColumnHalves == 2) {
      // Two halves through one partial accumulator; the other warpgroup's MMAs run during each promotion.
      pipe.wait(stage, round);
      pipe.multiply(partial, stage, 0, false);
      const Scales current_scales = read_scales(stage, round);
      stage_loads_done();
      ptx::wgmma_wait_group<0>();
      promote(partial, current_scales, 0);
      pipe.multiply(partial, stage, 1, false);
      ptx::wgmma_wait_group<0>();
      pipe.release(stage);
      promote(partial, current_scales, 1);
    } else {
      // One partial accumulator: the other warpgroups' MMAs keep the tensor cores busy during a promotion.
      pipe.wait(stage, round);
      pipe.multiply(partial, stage, 0, false);
      const Scales current_scales = read_scales(stage, round);
      stage_loads_done();
      ptx::wgmma_wait_group<0>();
      pipe.release(stage);
      promote(partial, current_scales);
    }
  }

  // After the tile's last K block: its promotion, where it is still pending.
  template <class Pipe>
  __device__ __forceinline__ void end_tile(const Pipe&) {
    if constexpr (kTwoPartials) promote((C::kNumKBlocks - 1) % 2 == 0 ? partial : partial2, scales);
  }
};

}  // namespace fgemm::sm90
