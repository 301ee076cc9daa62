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
  template <uint32_t kFragments>
  __device__ __forceinline__ static void apply(float (&)[kFragments], const GemmParams&, uint32_t, uint32_t,
                                               uint32_t, uint32_t) {}
};

template <uint32_t kShapeN>
struct AddC {
  // C is read once, in pairs of columns, with L2's evict-first policy: streamed through L2 at the epilogue of
  // every tile, it would otherwise evict the blocks of A and B the next tiles read (on an H100, 4096 x 7168 x
  // 2048 with C took 1.8 times as long as without; an L2 prefetch of C as the tile starts changed nothing).
  template <uint32_t kFragments>
  __device__ __forceinline__ static void apply(float (&acc)[kFragments], const GemmParams& params, uint32_t group,
                                               uint32_t row0, uint32_t row1, uint32_t n_base) {
    const uint32_t lane = threadIdx.x % 32;
    const float* c = params.c + group * params.c_group_stride;
    const uint64_t policy = ptx::l2_evict_first_policy();
    // In batches of up to 32 values, all loads of a batch in flight at once, within the registers the
    // accumulators leave (three math warpgroups get 128 per thread).
    constexpr uint32_t kBatch = kFragments < 32 ? kFragments : 32;
#pragma unroll
    for (uint32_t first = 0; first < kFragments; first += kBatch) {
      float values[kBatch];
#pragma unroll
      for (uint32_t j = 0; j < kBatch; j += 2) {
        const uint32_t i = first + j;
        values[j] = values[j + 1] = 0.0f;
        if (i >= kFragments) break;  // the last batch may be short (known at compile time)
        const uint32_t row = i / 2 % 2 ? row1 : row0;
        // An even column: with C's rows 16-byte aligned (validation), the pair is 8-byte aligned.
        const uint32_t col = n_base + (i / 4) * 8 + (lane % 4) * 2;
        if (row >= params.m || col >= kShapeN) continue;
        const float* pair = c + row * params.c_row_stride + col;
        if (col + 1 < kShapeN)
          ptx::load_streaming_f32x2(pair, policy, values[j], values[j + 1]);
        else
          values[j] = ptx::load_readonly(pair);
      }
#pragma unroll
      for (uint32_t j = 0; j < kBatch && first + j < kFragments; ++j) acc[first + j] += values[j];
    }
  }
};

}  // namespace fgemm::sm90
