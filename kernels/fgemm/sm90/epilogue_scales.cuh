// Epilogue transforms of INT8 W8A8 (epilogue_transform.cuh has the interface and the fragment layout):
// per-token and per-channel scales, and a bias per column of D.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/gemm_params.cuh"
#include "fgemm/ptx.cuh"
#include "fgemm/sm90/epilogue_transform.cuh"

namespace fgemm::sm90 {

// The column of D that fragment i of this thread holds, of the warpgroup's columns starting at n_base.
__device__ __forceinline__ uint32_t fragment_column(uint32_t n_base, uint32_t i) {
  return n_base + (i / 4) * 8 + (threadIdx.x % 32 % 4) * 2 + i % 2;
}

// acc *= sfa[row] * sfb[column]: sfa element row at sfa[group * sfa_group_stride + row * sfa_m_stride], sfb
// element column at sfb[group * sfb_group_stride + column * sfb_n_stride]; a zero stride repeats one scale (per
// tensor, or per expert). The scales are read as the tile starts, so that their latency hides behind the K
// loop: two per thread of sfa, one per column of sfb (each thread's two rows share its columns).
template <uint32_t kShapeN, uint32_t kFragments>
struct RowColumnScales {
  float row_scales[2];
  float column_scales[kFragments / 2];

  __device__ __forceinline__ void begin_tile(const EpilogueTile& tile) {
    const GemmParams& params = tile.params;
    const float* sfa = params.sfa + tile.group * params.sfa_group_stride;
    row_scales[0] = tile.row0 < params.m ? ptx::load_readonly(sfa + tile.row0 * params.sfa_m_stride) : 0.0f;
    row_scales[1] = tile.row1 < params.m ? ptx::load_readonly(sfa + tile.row1 * params.sfa_m_stride) : 0.0f;
    const float* sfb = params.sfb + tile.group * params.sfb_group_stride;
#pragma unroll
    for (uint32_t j = 0; j < kFragments / 2; ++j) {
      const uint32_t col = fragment_column(tile.n_base, j / 2 * 4 + j % 2);
      column_scales[j] = col < kShapeN ? ptx::load_readonly(sfb + col * params.sfb_n_stride) : 0.0f;
    }
  }

  __device__ __forceinline__ void apply(float (&acc)[kFragments], const EpilogueTile&) {
#pragma unroll
    for (uint32_t i = 0; i < kFragments; ++i)
      acc[i] *= row_scales[i / 2 % 2] * column_scales[i / 4 * 2 + i % 2];
  }
};

// How a bias element is read: FP32, or D's 16-bit type.
struct Fp32Bias {
  __device__ __forceinline__ static float at(const void* bias, uint32_t col) {
    return ptx::load_readonly(static_cast<const float*>(bias) + col);
  }
};
struct Bf16Bias {
  __device__ __forceinline__ static float at(const void* bias, uint32_t col) {
    return ptx::load_readonly_bf16(static_cast<const uint16_t*>(bias) + col);
  }
};
struct F16Bias {
  __device__ __forceinline__ static float at(const void* bias, uint32_t col) {
    return ptx::load_readonly_f16(static_cast<const uint16_t*>(bias) + col);
  }
};

// acc += bias[column] (bias [N]), read in the epilogue: the accumulators and the scales leave no registers to
// hold it through the K loop, and it is a few hundred bytes of L2 per tile.
template <uint32_t kShapeN, uint32_t kFragments, class Element>
struct AddBias {
  __device__ __forceinline__ void begin_tile(const EpilogueTile&) {}

  __device__ __forceinline__ void apply(float (&acc)[kFragments], const EpilogueTile& tile) {
#pragma unroll
    for (uint32_t j = 0; j < kFragments / 2; ++j) {
      const uint32_t col = fragment_column(tile.n_base, j / 2 * 4 + j % 2);
      const float bias = col < kShapeN ? Element::at(tile.params.bias, col) : 0.0f;
      acc[j / 2 * 4 + j % 2] += bias;
      acc[j / 2 * 4 + j % 2 + 2] += bias;
    }
  }
};

}  // namespace fgemm::sm90
