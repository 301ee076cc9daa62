// What the epilogue does to a warpgroup's FP32 accumulators before they are stored: nothing, or D = C + A·B
// with C a matrix [M, N], FP32 or of D's 16-bit type (a stack of them, one per group, in the k-grouped layout:
// accumulation into a gradient). In the wgmma fragment layout, fragment i of a thread holds row (i / 2 % 2 ? row1 :
// row0) and column n_base + (i / 4) * 8 + (lane % 4) * 2 + i % 2.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/gemm_params.cuh"
#include "fgemm/ptx.cuh"
#include "fgemm/sm90/epilogue_c_ring.cuh"

namespace fgemm::sm90 {

// What a transform knows of the tile whose accumulators it changes.
struct EpilogueTile {
  const GemmParams& params;
  uint32_t group;
  uint32_t row0, row1;  // the thread's two rows of D; params.m for rows another CTA stores (split-K)
  uint32_t n_base;      // the warpgroup's first column of D
  CChunkOrigin c_origin;
  CRingMemory c_ring;
};

// Each transform is an object of the math thread with two calls: begin_tile(), as a tile's K loop starts, and
// apply(), to the tile's accumulators in the epilogue.
struct Identity {
  __device__ __forceinline__ void begin_tile(const EpilogueTile&) {}
  template <uint32_t kFragments>
  __device__ __forceinline__ void apply(float (&)[kFragments], const EpilogueTile&) {}
};

// Two transforms, one after the other (INT8: its scales, then a bias, then C).
template <class First, class Second>
struct Chain {
  First first;
  Second second;

  __device__ __forceinline__ void begin_tile(const EpilogueTile& tile) {
    first.begin_tile(tile);
    second.begin_tile(tile);
  }
  template <uint32_t kFragments>
  __device__ __forceinline__ void apply(float (&acc)[kFragments], const EpilogueTile& tile) {
    first.apply(acc, tile);
    second.apply(acc, tile);
  }
};

// D = C + A·B, C read from the warpgroup's ring (epilogue_c_ring.cuh), which the TMA fills as the tile starts:
// no registers hold C through the K loop, and no thread waits for a load of C that the K loop could hide. (On
// an H100, 4096 x 7168 x 2048 BF16 took 158 µs without C; with C read by the math threads, in the epilogue,
// 298 µs, into registers as the tile started, 261 µs: docs/PERFORMANCE.md.)
template <class C>
struct AddC {
  CRing<C> ring;

  __device__ __forceinline__ void begin_tile(const EpilogueTile& tile) { ring.begin_tile(tile.c_ring, tile.c_origin); }

  // A chunk is 64 rows of 128 bytes (32 FP32 or 64 16-bit columns), whose 16-byte units the TMA's swizzle
  // permutes by the row's index modulo 8; a thread's two values of an 8-column group are 8 or 4 bytes of one unit.
  template <uint32_t kFragments>
  __device__ __forceinline__ void apply(float (&acc)[kFragments], const EpilogueTile& tile) {
    constexpr uint32_t kGroups = kFragments / 4;  // 8-column groups of the warpgroup
    constexpr uint32_t kGroupsPerChunk = CRing<C>::kChunkCols / 8;
    const uint32_t lane = threadIdx.x % 32;
    const uint32_t row_in_wg = (threadIdx.x % 128 / 32) * 16 + lane / 4;
    ring.for_each_chunk(tile.c_ring, tile.c_origin, [&](uint32_t chunk, uint32_t chunk_address) {
#pragma unroll
      for (uint32_t jj = 0; jj < kGroupsPerChunk; ++jj) {
        const uint32_t j = chunk * kGroupsPerChunk + jj;
        if (j >= kGroups) break;
#pragma unroll
        for (uint32_t half = 0; half < 2; ++half) {
          const uint32_t row = row_in_wg + half * 8;
          const uint32_t offset = row * 128 + (jj * 8 + lane % 4 * 2) * C::kCBytes;
          float x, y;
          load_pair(chunk_address + (offset ^ (row % 8) << 4), x, y);
          acc[4 * j + 2 * half] += x;
          acc[4 * j + 2 * half + 1] += y;
        }
      }
    });
  }

 private:
  // Two adjacent elements of C in shared memory, as FP32.
  __device__ __forceinline__ static void load_pair(uint32_t address, float& x, float& y) {
    if constexpr (C::kCBytes == 4)
      ptx::load_shared_f32x2(address, x, y);
    else if constexpr (C::kOutputF16)
      ptx::unpack_f16x2(ptx::load_shared_u32(address), x, y);
    else
      ptx::unpack_bf16x2(ptx::load_shared_u32(address), x, y);
  }
};

}  // namespace fgemm::sm90
