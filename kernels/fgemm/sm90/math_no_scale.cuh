// The per-K-block math of unscaled GEMMs (BF16 and FP16 into FP32, INT8 into INT32): each K block's MMAs
// accumulate straight into the tile's accumulators, which the tensor cores keep in FP32 (or exactly, in INT32),
// so there is nothing to promote and a stage holds only A and B. A warpgroup keeps one K block's MMAs in flight: it issues block kb's, waits for
// block kb - 1's, and gives that block's stage back, so the tensor cores never wait for the warpgroup.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/gemm_params.cuh"
#include "fgemm/ptx.cuh"

namespace fgemm::sm90 {

template <class C, class Mma_>
struct NoScaleMath {
  using Mma = Mma_;  // the wgmma instruction over the warpgroup's columns
  using Accumulator = typename Mma::Accumulator;
  static constexpr uint32_t kStageExtraBytes = 0;
  static constexpr uint32_t kTmaExtraBytes = 0;
  static constexpr uint32_t kHelperArrivals = 0;
  static constexpr uint32_t kStepPeriod = 1;
  static constexpr RegisterSplit kRegisters = C::kTile.register_split();
  static constexpr uint32_t kFragments = C::kWarpgroupN / 2;
  static_assert(Mma::N == C::kWarpgroupN, "one wgmma spans the warpgroup's columns");

  __device__ __forceinline__ static void load_with_stage(uint8_t*, const ScaleMaps&, uint64_t*, uint32_t, uint32_t,
                                                         uint32_t, uint32_t) {}
  template <class Scheduler>
  __device__ __forceinline__ static void help_producer(const GemmParams&, Scheduler, uint8_t*, uint64_t*, uint64_t*) {}

  static constexpr uint32_t kNoStage = 0xffffffff;

  Accumulator acc[kFragments];
  uint32_t stage_in_flight = kNoStage;  // the stage whose MMAs may still run

  __device__ __forceinline__ NoScaleMath(const GemmParams&, const uint8_t*, uint32_t, uint32_t, uint32_t) {}

  // Zeroed here rather than by the first MMA, so that a tile with no K blocks (an empty expert of the
  // k-grouped layout) stores zeros (or C).
  __device__ __forceinline__ void begin_tile(uint32_t, uint32_t, uint32_t) {
#pragma unroll
    for (uint32_t i = 0; i < kFragments; ++i) acc[i] = 0;
  }

  template <class Pipe>
  __device__ __forceinline__ void step(const Pipe& pipe, uint32_t stage, uint32_t round, bool) {
    pipe.wait(stage, round);
    pipe.multiply(acc, stage, 0, true);
    ptx::wgmma_wait_group<1>();
    if (stage_in_flight != kNoStage) pipe.release(stage_in_flight);
    stage_in_flight = stage;
  }

  // The tile's last MMAs complete before the epilogue reads the accumulators.
  template <class Pipe>
  __device__ __forceinline__ void end_tile(const Pipe& pipe) {
    ptx::wgmma_wait_group<0>();
#pragma unroll
    for (uint32_t i = 0; i < kFragments; ++i) ptx::fence_operand(acc[i]);
    if (stage_in_flight != kNoStage) pipe.release(stage_in_flight);
    stage_in_flight = kNoStage;
  }
};

}  // namespace fgemm::sm90
