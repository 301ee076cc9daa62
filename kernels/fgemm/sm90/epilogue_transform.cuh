// What the epilogue does to a warpgroup's FP32 accumulators before they are stored: nothing, or D = C + A·B
// with C an FP32 matrix [M, N] (a stack of them, one per group, in the k-grouped layout: accumulation into a
// gradient). In the wgmma fragment layout, fragment i of a thread holds row (i / 2 % 2 ? row1 : row0) and
// column n_base + (i / 4) * 8 + (lane % 4) * 2 + i % 2.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/gemm_params.cuh"
#include "fgemm/ptx.cuh"

namespace fgemm::sm90 {

// Each transform is an object of the math thread, made with its warpgroup's kSmemBytesPerWarpgroup of shared
// memory, with two calls: begin_tile(), as a tile's K loop starts, and apply(), to the tile's accumulators in
// the epilogue.
struct Identity {
  static constexpr uint32_t kSmemBytesPerWarpgroup = 0;
  __device__ __forceinline__ explicit Identity(uint8_t*) {}
  __device__ __forceinline__ void begin_tile(const GemmParams&, uint32_t, uint32_t, uint32_t, uint32_t) {}
  template <uint32_t kFragments>
  __device__ __forceinline__ void apply(float (&)[kFragments], const GemmParams&, uint32_t, uint32_t, uint32_t,
                                        uint32_t) {}
};

// D = C + A·B. C is read once, in pairs of columns, under L2's evict-first policy: streamed through L2 in every
// tile's epilogue, it would otherwise evict the blocks of A and B that the next tiles read.
//
// kReadAhead (the unscaled kinds, which have the shared memory): each thread copies its values of the tile's C
// into shared memory with cp.async as the tile's K loop starts, and reads them back in the epilogue. C never
// passes through registers before then: a load into registers that is still in flight stalls the next
// wgmma.fence, so C loaded into registers at the start (or in the epilogue) put DRAM's latency into every tile
// (on an H100, 4096 x 7168 x 2048 BF16 took 262 µs with C, 189 µs without, on 128 x 128 tiles). FP8 reads C
// in the epilogue, in batches.
template <uint32_t kShapeN, uint32_t kFragments, bool kReadAhead>
struct AddC {
  static constexpr uint32_t kSmemBytesPerWarpgroup = kReadAhead ? 128 * kFragments * 4 : 0;
  uint32_t own_values;  // this thread's kFragments values of C in shared memory (read ahead)

  __device__ __forceinline__ explicit AddC(uint8_t* smem)
      : own_values(ptx::smem_address(smem) + threadIdx.x % 128 * kFragments * 4) {}

  __device__ __forceinline__ void begin_tile(const GemmParams& params, uint32_t group, uint32_t row0, uint32_t row1,
                                             uint32_t n_base) {
    if constexpr (kReadAhead) {
      const uint64_t policy = ptx::l2_evict_first_policy();
      const float* c = params.c + group * params.c_group_stride;
#pragma unroll
      for (uint32_t i = 0; i < kFragments; i += 2) {
        const uint32_t row = pair_row(i, row0, row1), col = pair_col(i, n_base);
        const bool inside = row < params.m && col < kShapeN;
        const uint32_t bytes = !inside ? 0 : col + 1 < kShapeN ? 8 : 4;
        ptx::cp_async_8_zero_fill(own_values + i * 4, inside ? c + row * params.c_row_stride + col : c, bytes,
                                  policy);
      }
      ptx::cp_async_commit();
    }
  }

  __device__ __forceinline__ void apply(float (&acc)[kFragments], const GemmParams& params, uint32_t group,
                                        uint32_t row0, uint32_t row1, uint32_t n_base) {
    if constexpr (kReadAhead) {
      ptx::cp_async_wait_all();
#pragma unroll
      for (uint32_t i = 0; i < kFragments; i += 2) {
        float x, y;
        ptx::load_shared_f32x2(own_values + i * 4, x, y);
        acc[i] += x;
        acc[i + 1] += y;
      }
    } else {
      // In batches of up to 32 values, all loads of a batch in flight at once, within the registers the
      // accumulators leave (three math warpgroups get 128 per thread).
      constexpr uint32_t kBatch = kFragments < 32 ? kFragments : 32;
      const uint64_t policy = ptx::l2_evict_first_policy();
      const float* c = params.c + group * params.c_group_stride;
#pragma unroll
      for (uint32_t first = 0; first < kFragments; first += kBatch) {
        float values[kBatch];
#pragma unroll
        for (uint32_t j = 0; j < kBatch; j += 2) {
          const uint32_t i = first + j;
          values[j] = values[j + 1] = 0.0f;
          if (i >= kFragments) break;  // the last batch may be short (known at compile time)
          const uint32_t row = pair_row(i, row0, row1), col = pair_col(i, n_base);
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
  }

 private:
  // Fragments i and i + 1 (i even) of a thread: one row, two adjacent columns, the first even (so, with C's rows
  // 16-byte aligned by validation, the pair is 8-byte aligned).
  __device__ __forceinline__ static uint32_t pair_row(uint32_t i, uint32_t row0, uint32_t row1) {
    return i / 2 % 2 ? row1 : row0;
  }
  __device__ __forceinline__ static uint32_t pair_col(uint32_t i, uint32_t n_base) {
    return n_base + (i / 4) * 8 + (threadIdx.x % 4) * 2;
  }
};

}  // namespace fgemm::sm90
