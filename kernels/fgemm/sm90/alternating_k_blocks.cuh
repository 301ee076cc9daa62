// Alternate K blocks (TileConfig::alternate_k_blocks, docs/ARCHITECTURE.md): the two math warpgroups of a 64-row
// tile each multiply every other K block over all of the tile's columns, warpgroup 0 the even blocks and
// warpgroup 1 the odd ones, and before the epilogue warpgroup 1's sums are added to warpgroup 0's, which stores
// the tile alone. Each K block's chain in a warpgroup (the wait for its stage, its MMAs and their latency, the
// promotion, the release) is run half as often as where the warpgroups split the columns: on the narrow tiles of
// decode shapes that chain, not the loads, bounds the kernel (docs/PERFORMANCE.md).
//
// With the stages a multiple of four, K block kb's stage has kb's parity, so each warpgroup waits on and gives back
// only the stages of its own parity, and the parity of a warpgroup's step (which of two partial accumulators it
// fills) is that of the stage's index halved. With the K blocks a multiple of four too, both warpgroups take as many
// and end on a step of the parity of the tile's last K block, as the math's end_tile expects (gemm_config.cuh).
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/ptx.cuh"
#include "fgemm/sm90/stage_ring.cuh"
#include "fgemm/sm90/fragment_sums.cuh"

namespace fgemm::sm90 {

template <class C>
struct AlternatingKBlocks {
  static constexpr uint32_t kNumStages = C::kNumStages;
  // Named barriers beside the epilogue's (1 + warpgroup): warpgroup 1's sums are written; warpgroup 0 has read them.
  static constexpr uint32_t kSumsWrittenBarrier = 1 + C::kNumMathWarpgroups;
  static constexpr uint32_t kSumsReadBarrier = kSumsWrittenBarrier + 1;

  // The K loop of warpgroup kParity over its K blocks of a tile.
  template <uint32_t kParity, class Math, class Pipe>
  __device__ __forceinline__ static void k_loop(Math& math, Pipe& pipe) {
    using R = Ring<C>;
    for (uint32_t round = 0; round < R::kFullRounds; ++round) {
      pipe.new_round();
#pragma unroll
      for (uint32_t i = kParity; i < kNumStages; i += 2) math.step(pipe, i, round, i % 4 >= 2);
    }
    pipe.new_round();
#pragma unroll
    for (int i = kParity; i < static_cast<int>(R::kLastRoundStages); i += 2)
      math.step(pipe, i, R::kFullRounds, i % 4 >= 2);
    math.end_tile(pipe);
    ++pipe.tiles_before;
  }

  // After both K loops of a tile: warpgroup 0's `acc` becomes the sum of both warpgroups' (`sums`: the shared-memory
  // address of warpgroup 1's). Warpgroup 1 waits until warpgroup 0 has read its sums, which its next tile
  // overwrites; warpgroup 0 goes on to the epilogue.
  template <uint32_t kFragments>
  __device__ __forceinline__ static void add_sums(float (&acc)[kFragments], uint32_t sums, uint32_t warpgroup) {
    using Sums = FragmentSums<128, kFragments>;
    static_assert(Sums::kBytes == C::kSumsBytes, "warpgroup 1's sums take the shared memory the host gave them");
    const uint32_t address = Sums::thread_address(sums);
    if (warpgroup == 1) {
      Sums::store(address, acc);
      ptx::named_barrier_arrive(kSumsWrittenBarrier, 256);
      ptx::named_barrier_sync(kSumsReadBarrier, 256);
    } else {
      ptx::named_barrier_sync(kSumsWrittenBarrier, 256);
      Sums::add_to(address, acc);
      ptx::named_barrier_arrive(kSumsReadBarrier, 256);
    }
  }
};

}  // namespace fgemm::sm90
