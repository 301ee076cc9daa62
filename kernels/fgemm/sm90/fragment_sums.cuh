// The FP32 sums that kThreads threads (a warpgroup, or a warp) hold of their part of a tile, in shared memory for
// another party to add to its own: the other math warpgroup where the two take alternate K blocks
// (alternating_k_blocks.cuh), or a warp's owner CTA in split-K (split_k_reduction.cuh). The sums are fragment
// quadruples one after another, each the threads' in thread order (16 bytes a thread), so that a warp's stores and
// loads cover 512 contiguous bytes, free of bank conflicts.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/ptx.cuh"

namespace fgemm::sm90 {

template <uint32_t kThreads, uint32_t kFragments>
struct FragmentSums {
  static constexpr uint32_t kQuadBytes = kThreads * 16;
  static constexpr uint32_t kBytes = kFragments / 4 * kQuadBytes;
  static_assert(kFragments % 4 == 0, "the sums are whole quadruples");

  // This thread's first quadruple in the sums that start at shared-memory address `sums`.
  __device__ __forceinline__ static uint32_t thread_address(uint32_t sums) {
    return sums + threadIdx.x % kThreads * 16;
  }

  __device__ __forceinline__ static void store(uint32_t address, const float (&acc)[kFragments]) {
#pragma unroll
    for (uint32_t q = 0; q < kFragments / 4; ++q)
      ptx::store_shared_f32x4(address + q * kQuadBytes, acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
  }

  // acc += the sums of this thread at `address` of this CTA's shared memory.
  __device__ __forceinline__ static void add_to(uint32_t address, float (&acc)[kFragments]) {
#pragma unroll
    for (uint32_t q = 0; q < kFragments / 4; ++q) {
      float v[4];
      ptx::load_shared_f32x4(address + q * kQuadBytes, v[0], v[1], v[2], v[3]);
#pragma unroll
      for (uint32_t e = 0; e < 4; ++e) acc[4 * q + e] += v[e];
    }
  }
};

}  // namespace fgemm::sm90
