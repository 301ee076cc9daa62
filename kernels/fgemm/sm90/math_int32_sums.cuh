// The per-K-block math of INT8 GEMMs whose scales (if any) apply to the whole sum: the MMAs accumulate every K
// block into exact INT32 sums (NoScaleMath's K loop), and as the tile's K loop ends the sums become the FP32
// accumulators the epilogue takes: their values, rounded to nearest (per-token / per-channel scaling, applied
// by the epilogue's transform), or, for D int32, their bits unchanged, which the epilogue's 4-byte stores then
// write as they are.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/gemm_params.cuh"
#include "fgemm/ptx.cuh"
#include "fgemm/sm90/math_no_scale.cuh"

namespace fgemm::sm90 {

template <class C, class Mma_, bool kExactBits>
struct Int32SumsMath {
  using Mma = Mma_;  // the wgmma instruction, INT8 x INT8 into INT32
  using Sums = NoScaleMath<C, Mma>;
  static constexpr uint32_t kStageExtraBytes = 0;
  static constexpr uint32_t kTmaExtraBytes = 0;
  static constexpr uint32_t kHelperArrivals = 0;
  static constexpr uint32_t kStepPeriod = 1;
  static constexpr RegisterSplit kRegisters = Sums::kRegisters;
  static constexpr uint32_t kFragments = Sums::kFragments;

  __device__ __forceinline__ static void load_with_stage(uint8_t*, const ScaleMaps&, uint64_t*, uint32_t, uint32_t,
                                                         uint32_t, uint32_t) {}
  template <class Scheduler>
  __device__ __forceinline__ static void help_producer(const GemmParams&, Scheduler, uint8_t*, uint64_t*, uint64_t*) {}

  Sums sums;
  float acc[kFragments];

  // Alternate K blocks would add two warpgroups' sums after their conversion, which D int32's bits do not allow.
  static_assert(!C::kAlternateKBlocks, "the warpgroups' INT32 sums are never added as FP32");

  __device__ __forceinline__ Int32SumsMath(const GemmParams& params, const uint8_t* smem_extra, uint32_t wg_row,
                                           uint32_t row_in_wg, uint32_t k_parity)
      : sums(params, smem_extra, wg_row, row_in_wg, k_parity) {}

  __device__ __forceinline__ void begin_tile(uint32_t group, uint32_t n_base, uint32_t first_k_block) {
    sums.begin_tile(group, n_base, first_k_block);
  }

  template <class Pipe>
  __device__ __forceinline__ void step(const Pipe& pipe, uint32_t stage, uint32_t round, bool odd) {
    sums.step(pipe, stage, round, odd);
  }

  template <class Pipe>
  __device__ __forceinline__ void end_tile(const Pipe& pipe) {
    sums.end_tile(pipe);
#pragma unroll
    for (uint32_t i = 0; i < kFragments; ++i)
      acc[i] = kExactBits ? __int_as_float(sums.acc[i]) : static_cast<float>(sums.acc[i]);
  }
};

}  // namespace fgemm::sm90
