// What the epilogue does to a warpgroup's FP32 accumulators before they are stored: nothing, or D = C + A·B
// with C an FP32 matrix [M, N] (a stack of them, one per group, in the k-grouped layout: accumulation into a
// gradient). In the wgmma fragment layout, fragment i of a
// thread holds row (i / 2 % 2 ? row1 : row0) and column n_base + (i / 4) * 8 + (lane % 4) * 2 + i % 2.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/gemm_params.cuh"
#include "fgemm/ptx.cuh"

namespace fgemm::sm90 {

struct Identity {
  __device__ __forceinline__ static void prefetch(const GemmParams&, uint32_t, uint32_t, uint32_t) {}
  template <uint32_t kFragments>
  __device__ __forceinline__ static void apply(float (&)[kFragments], const GemmParams&, uint32_t, uint32_t,
                                               uint32_t, uint32_t) {}
};

template <uint32_t kShapeN, uint32_t kWarpgroupN>
struct AddC {
  // Called as the tile's K loop starts: the warpgroup's 64 rows of C are brought into L2 while the MMAs run, so
  // that apply() reads them from there. (Read only in the epilogue, C's lines came from DRAM in a burst that
  // nothing overlapped: 4096 x 7168 x 2048 with C took 1.8 times as long as without.)
  __device__ __forceinline__ static void prefetch(const GemmParams& params, uint32_t group, uint32_t m_base,
                                                  uint32_t n_base) {
    constexpr uint32_t kLinesPerRow = ceil_div(kWarpgroupN * 4, 128u);
    const float* c = params.c + group * params.c_group_stride;
    for (uint32_t line = threadIdx.x % 128; line < 64 * kLinesPerRow; line += 128) {
      const uint32_t row = m_base + line / kLinesPerRow, col = n_base + line % kLinesPerRow * 32;
      if (row < params.m && col < kShapeN) ptx::prefetch_l2(c + row * params.c_row_stride + col);
    }
  }

  template <uint32_t kFragments>
  __device__ __forceinline__ static void apply(float (&acc)[kFragments], const GemmParams& params, uint32_t group,
                                               uint32_t row0, uint32_t row1, uint32_t n_base) {
    const uint32_t lane = threadIdx.x % 32;
    const float* c = params.c + group * params.c_group_stride;
#pragma unroll
    for (uint32_t i = 0; i < kFragments; ++i) {
      const uint32_t row = i / 2 % 2 ? row1 : row0;
      const uint32_t col = n_base + (i / 4) * 8 + (lane % 4) * 2 + i % 2;
      if (row < params.m && col < kShapeN) acc[i] += ptx::load_readonly(c + row * params.c_row_stride + col);
    }
  }
};

}  // namespace fgemm::sm90
