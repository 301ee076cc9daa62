// What the epilogue does to a warpgroup's FP32 accumulators before they are stored: nothing, or D = C + A·B
// with C an FP32 matrix [M, N] (a stack of them, one per group, in the k-grouped layout: accumulation into a
// gradient). In the wgmma fragment layout, fragment i of a thread holds row (i / 2 % 2 ? row1 : row0) and
// column n_base + (i / 4) * 8 + (lane % 4) * 2 + i % 2.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/gemm_params.cuh"
#include "fgemm/ptx.cuh"

namespace fgemm::sm90 {

// Each transform is an object of the math thread with two calls: begin_tile(), as a tile's K loop starts, and
// apply(), to the tile's accumulators in the epilogue.
struct Identity {
  __device__ __forceinline__ void begin_tile(const GemmParams&, uint32_t, uint32_t, uint32_t, uint32_t) {}
  template <uint32_t kFragments>
  __device__ __forceinline__ void apply(float (&)[kFragments], const GemmParams&, uint32_t, uint32_t, uint32_t,
                                        uint32_t) {}
};

// Two transforms, one after the other (INT8: its scales, then a bias, then C).
template <class First, class Second>
struct Chain {
  First first;
  Second second;

  __device__ __forceinline__ void begin_tile(const GemmParams& params, uint32_t group, uint32_t row0, uint32_t row1,
                                             uint32_t n_base) {
    first.begin_tile(params, group, row0, row1, n_base);
    second.begin_tile(params, group, row0, row1, n_base);
  }
  template <uint32_t kFragments>
  __device__ __forceinline__ void apply(float (&acc)[kFragments], const GemmParams& params, uint32_t group,
                                        uint32_t row0, uint32_t row1, uint32_t n_base) {
    first.apply(acc, params, group, row0, row1, n_base);
    second.apply(acc, params, group, row0, row1, n_base);
  }
};

// D = C + A·B. Where the math threads have the registers (kLoadEarly: the unscaled kinds), each reads its values
// of the tile's C as the tile's K loop starts, in pairs of columns and under L2's evict-first policy (C is read
// once; streamed through L2 it would evict the blocks of A and B that the next tiles read), so that the loads'
// latency hides behind the K loop. FP8's partial accumulators leave no room: it reads C in the epilogue, value
// by value. (On an H100, 4096 x 7168 x 2048 BF16 with C read in the epilogue took 298 µs, read early 261 µs,
// against 158 µs without C: docs/PERFORMANCE.md.)
template <uint32_t kShapeN, uint32_t kFragments, bool kLoadEarly>
struct AddC {
  float early[kLoadEarly ? kFragments : 1];

  __device__ __forceinline__ void begin_tile(const GemmParams& params, uint32_t group, uint32_t row0, uint32_t row1,
                                             uint32_t n_base) {
    if constexpr (kLoadEarly) load(early, params, group, row0, row1, n_base);
  }

  __device__ __forceinline__ void apply(float (&acc)[kFragments], const GemmParams& params, uint32_t group,
                                        uint32_t row0, uint32_t row1, uint32_t n_base) {
    if constexpr (kLoadEarly) {
#pragma unroll
      for (uint32_t i = 0; i < kFragments; ++i) acc[i] += early[i];
    } else {
      const float* c = params.c + group * params.c_group_stride;
      const uint32_t lane = threadIdx.x % 32;
#pragma unroll
      for (uint32_t i = 0; i < kFragments; ++i) {
        const uint32_t row = i / 2 % 2 ? row1 : row0;
        const uint32_t col = n_base + (i / 4) * 8 + (lane % 4) * 2 + i % 2;
        if (row < params.m && col < kShapeN) acc[i] += ptx::load_readonly(c + row * params.c_row_stride + col);
      }
    }
  }

 private:
  // This thread's fragments of C (zero past the edges of C) into `values`, in pairs of columns.
  __device__ __forceinline__ static void load(float (&values)[kFragments], const GemmParams& params, uint32_t group,
                                              uint32_t row0, uint32_t row1, uint32_t n_base) {
    const uint32_t lane = threadIdx.x % 32;
    const float* c = params.c + group * params.c_group_stride;
    const uint64_t policy = ptx::l2_evict_first_policy();
#pragma unroll
    for (uint32_t i = 0; i < kFragments; i += 2) {
      const uint32_t row = i / 2 % 2 ? row1 : row0;
      // An even column: with C's rows 16-byte aligned (validation), the pair is 8-byte aligned.
      const uint32_t col = n_base + (i / 4) * 8 + (lane % 4) * 2;
      values[i] = values[i + 1] = 0.0f;
      if (row >= params.m || col >= kShapeN) continue;
      const float* pair = c + row * params.c_row_stride + col;
      if (col + 1 < kShapeN)
        ptx::load_streaming_f32x2(pair, policy, values[i], values[i + 1]);
      else
        values[i] = ptx::load_readonly(pair);
    }
  }
};

}  // namespace fgemm::sm90
