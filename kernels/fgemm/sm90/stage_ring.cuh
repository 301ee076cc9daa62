// The ring of shared-memory stages between the producer and the math warpgroups: each stage holds one K block
// of A and B (and what the per-K-block math loads with them), guarded by a "full" barrier (the TMA's bytes
// have landed) and an "empty" one (every math warp of every CTA of the cluster is done with it).
//
// Every tile walks the ring from stage 0: K block kb of a tile goes through stage kb % kNumStages. The math
// warpgroups' K loop is unrolled over the stages, so each stage's barriers and shared-memory descriptors are
// compile-time offsets of warp-uniform bases: the MMAs of a block issue back to back, with no address
// arithmetic between them. A stage is then used kFullRounds or kFullRounds + 1 times per tile, and its n-th
// use waits for its barriers' phase of parity n & 1. In the k-grouped layout a tile's K blocks are known only
// on the device: the ring keeps each stage's parity as a bit of a word (RingPhases) instead.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/ptx.cuh"
#include "fgemm/sm90/scheduler.cuh"

namespace fgemm::sm90 {

// The tensor maps of the scales the per-K-block math may load with a stage (null where a kind has none).
struct ScaleMaps {
  const ptx::TensorMap* sfa;
  const ptx::TensorMap* sfb;
};

// The parities of the stages' next uses where the number of K blocks of a tile is known only on the device:
// bit s is stage s's. A tile of k_blocks blocks uses stage s k_blocks / kNumStages times, once more where
// s < k_blocks % kNumStages.
template <class C>
struct RingPhases {
  uint32_t bits = 0;

  __device__ __forceinline__ uint32_t parity(uint32_t stage, uint32_t round) const {
    return ((bits >> stage) ^ round) & 1;
  }
  __device__ __forceinline__ void end_tile(uint32_t k_blocks) {
    const uint32_t all = (1u << C::kNumStages) - 1;
    bits ^= ((k_blocks / C::kNumStages) % 2 ? all : 0u) ^ ((1u << (k_blocks % C::kNumStages)) - 1);
  }
};

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

// The producers' walk: every K block of every tile of the CTA, in the ring's order, calling
// fill(tile, group, kb, stage) once the stage is free, with kb the K block's index in the problem's K (the
// tile's K loop starts at tile.k_begin: a k-grouped expert's, or a split's). An out-of-range expert (a bad
// m_indices entry) reads expert 0; its rows are written as NaN.
template <class C, class Scheduler, class Fill>
__device__ __forceinline__ void fill_stages(Scheduler scheduler, uint64_t* empty, Fill fill) {
  uint32_t tiles_before = 0;
  RingPhases<C> phases;
  Tile tile;
  while (scheduler.next(tile)) {
    const uint32_t group = tile.group < scheduler.num_groups ? tile.group : 0;
    const uint32_t first_k_block = tile.k_begin / C::kBlockK;
    if constexpr (C::kLayout == Layout::KGrouped) {
      const uint32_t k_blocks = ceil_div(tile.k_len, C::kBlockK);
#pragma unroll 1
      for (uint32_t kb = 0; kb < k_blocks; ++kb) {
        const uint32_t stage = kb % C::kNumStages;
        ptx::mbarrier_wait(&empty[stage], phases.parity(stage, kb / C::kNumStages) ^ 1);
        fill(tile, group, first_k_block + kb, stage);
      }
      phases.end_tile(k_blocks);
      continue;
    }
    // Not unrolled: the producers run on 40 registers, and copies of the loop body would only spill them.
#pragma unroll 1
    for (uint32_t kb = 0; kb < C::kNumKBlocks; ++kb) {
      const uint32_t stage = kb % C::kNumStages;
      ptx::mbarrier_wait(&empty[stage], Ring<C>::parity(stage, kb / C::kNumStages, tiles_before) ^ 1);
      fill(tile, group, first_k_block + kb, stage);
    }
    ++tiles_before;
  }
}

// Called by a math thread after its last ordinary loads from a stage (the per-K-block math's scales), before the
// stage goes back. The TMA refills the stage through the async proxy, which the release's arrive does not order
// after those loads: ptxas issues the arrive while the last of them are outstanding and uses their values after
// it, and on an H100 refills overwrote 1D1D scales before they had been read (docs/PERFORMANCE.md), as they did in
// C's ring (epilogue_c_ring.cuh). A proxy fence in each thread makes its loads of the stage complete first.
__device__ __forceinline__ void stage_loads_done() { ptx::fence_proxy_async_shared(); }

// A math warpgroup's side of the ring: waiting for a stage, multiplying its K block, giving it back. The
// per-K-block math policy schedules these calls; the operand policies supply the shared-memory descriptors,
// `Mma` the instruction.
template <class C, class OperandA, class OperandB, class Mma>
struct StagePipe {
  uint64_t* full;
  uint64_t* empty;
  uint64_t desc_a_base;  // this warpgroup's rows of A in stage 0
  uint64_t desc_b_base;  // this warpgroup's columns of B in stage 0
  uint32_t tiles_before;
  uint32_t lane;
  RingPhases<C> phases;  // k-grouped: the stages' parities (tiles_before is not enough)

  __device__ __forceinline__ void wait(uint32_t stage, uint32_t round) const {
    if constexpr (C::kLayout == Layout::KGrouped)
      ptx::mbarrier_wait(&full[stage], phases.parity(stage, round));
    else
      ptx::mbarrier_wait(&full[stage], Ring<C>::parity(stage, round, tiles_before));
  }

  // Starts the MMAs of the stage's K block into `d` (accumulating onto it where `accumulate`), for the
  // wgmma-wide column group `col_group` of the warpgroup's columns, and commits them as one group.
  template <class Accumulator, uint32_t kFragments>
  __device__ __forceinline__ void multiply(Accumulator (&d)[kFragments], uint32_t stage, uint32_t col_group,
                                           bool accumulate) const {
#pragma unroll
    for (uint32_t i = 0; i < kFragments; ++i) ptx::fence_operand(d[i]);
    ptx::wgmma_fence();
    const uint64_t desc_a = desc_a_base + OperandA::stage_step(C::kSmemA, stage);
    const uint64_t desc_b = desc_b_base + OperandB::stage_step(C::kSmemB, stage) +
                            OperandB::row_step(col_group * Mma::N, C::kBlockK * C::kTile.operand_bytes);
#pragma unroll
    for (uint32_t kk = 0; kk < C::kBlockK / Mma::K; ++kk)
      Mma::mma(d, desc_a + kk * OperandA::kInstructionKStep, desc_b + kk * OperandB::kInstructionKStep,
               accumulate || kk > 0);
    ptx::wgmma_commit_group();
  }

  // Once a stage's MMAs are complete, the stage goes back to the producer (of every CTA of the cluster).
  __device__ __forceinline__ void release(uint32_t stage) const {
    __syncwarp();
    if constexpr (C::kMulticastSize > 1) {
      // One lane per CTA: arrivals from one lane on the cluster's barriers follow one another slowly (two
      // from one lane cost 128 x 256 tiles about 80 cycles per K block, 7%, in bench/mainloop_probe.cu).
      if (lane < C::kMulticastSize) ptx::mbarrier_arrive_cluster(&empty[stage], lane);
    } else if (lane == 0) {
      ptx::mbarrier_arrive(&empty[stage]);
    }
  }

  // Every stage's descriptors are loop invariants, which ptxas would hoist out of the K loop into registers and
  // spill: passing their bases through a shuffle once per round keeps them computed where they are used.
  __device__ __forceinline__ void new_round() {
    desc_a_base = __shfl_sync(0xffffffff, desc_a_base, 0);
    desc_b_base = __shfl_sync(0xffffffff, desc_b_base, 0);
  }
};

}  // namespace fgemm::sm90
