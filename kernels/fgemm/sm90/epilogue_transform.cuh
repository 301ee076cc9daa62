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

// D = C + A·B. C is read once, in pairs of columns, under L2's evict-first policy: streamed through L2 in every
// tile's epilogue, it would otherwise evict the blocks of A and B that the next tiles read. Where the math
// threads have the registers (kLoadEarly: the unscaled kinds), the tile's C is read as its K loop starts, so
// that the loads' latency hides behind it; FP8's partial accumulators leave no room, and it reads C in the
// epilogue, in batches. (On an H100, 4096 x 7168 x 2048 BF16 with C read in the epilogue, without the policy,
// took 1.8 times as long as without C; an L2 prefetch of C as the tile starts changed nothing.)
template <uint32_t kShapeN, uint32_t kFragments, bool kLoadEarly>
struct AddC {
  float early[kLoadEarly ? kFragments : 1];

  __device__ __forceinline__ void begin_tile(const GemmParams& params, uint32_t group, uint32_t row0, uint32_t row1,
                                             uint32_t n_base) {
    if constexpr (kLoadEarly) load(early, 0, params, group, row0, row1, n_base);
  }

  __device__ __forceinline__ void apply(float (&acc)[kFragments], const GemmParams& params, uint32_t group,
                                        uint32_t row0, uint32_t row1, uint32_t n_base) {
    if constexpr (kLoadEarly) {
#pragma unroll
      for (uint32_t i = 0; i < kFragments; ++i) acc[i] += early[i];
    } else {
      // In batches of up to 32 values, all loads of a batch in flight at once, within the registers the
      // accumulators leave (three math warpgroups get 128 per thread).
      constexpr uint32_t kBatch = kFragments < 32 ? kFragments : 32;
#pragma unroll
      for (uint32_t first = 0; first < kFragments; first += kBatch) {
        float values[kBatch];
        load(values, first, params, group, row0, row1, n_base);
#pragma unroll
        for (uint32_t j = 0; j < kBatch && first + j < kFragments; ++j) acc[first + j] += values[j];
      }
    }
  }

 private:
  // Fragments [first, first + kCount) of this thread's C (zero past the edges of C) into `values`.
  template <uint32_t kCount>
  __device__ __forceinline__ static void load(float (&values)[kCount], uint32_t first, const GemmParams& params,
                                              uint32_t group, uint32_t row0, uint32_t row1, uint32_t n_base) {
    const uint32_t lane = threadIdx.x % 32;
    const float* c = params.c + group * params.c_group_stride;
    const uint64_t policy = ptx::l2_evict_first_policy();
#pragma unroll
    for (uint32_t j = 0; j < kCount; j += 2) {
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
  }
};

}  // namespace fgemm::sm90
