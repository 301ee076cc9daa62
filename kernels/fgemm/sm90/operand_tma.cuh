// What the two operand policies (operand_k_major.cuh, operand_mn_major.cuh) share: their descriptors' steps,
// and the one TMA load they issue for a box of a stage.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/ptx.cuh"

namespace fgemm::sm90 {

// A stage of an operand is rows x 128 bytes in either storage order, so its descriptor steps alike. Shared
// memory ends below 256 KiB, so stepping a descriptor's 14-bit address field never carries over.
struct OperandDescriptorSteps {
  // The step from stage 0 to stage `stage` of a buffer of `stage_bytes` per stage (descriptors count 16 bytes).
  __device__ __forceinline__ static constexpr uint64_t stage_step(uint32_t stage_bytes, uint32_t stage) {
    return stage * (stage_bytes / 16);
  }
  // The step over `rows` rows of `row_bytes` (MN-major: whole 64-element boxes, rows / 64 boxes of kBlockK x 128
  // bytes, the same bytes).
  __device__ __forceinline__ static constexpr uint64_t row_step(uint32_t rows, uint32_t row_bytes) {
    return rows * row_bytes / 16;
  }
};

// The box at (inner, outer) of the map's two dimensions, into this CTA's shared memory or multicast to every CTA
// of the multicast cluster, from a matrix (2-D map) or a stack of them (3-D map, one per group).
// The contiguous dimension comes first; `group` is read where kStacked.
template <bool kStacked, uint32_t kMulticastSize>
__device__ __forceinline__ void load_operand_box(uint8_t* dst, const ptx::TensorMap* map, uint64_t* barrier,
                                                 bool multicast, int32_t inner, int32_t outer, uint32_t group) {
  constexpr uint16_t kAllCtas = (1u << kMulticastSize) - 1;
  if constexpr (kStacked) {
    if (multicast)
      ptx::tma_load_3d_multicast(dst, map, barrier, kAllCtas, inner, outer, group);
    else
      ptx::tma_load_3d(dst, map, barrier, inner, outer, group);
  } else {
    if (multicast)
      ptx::tma_load_2d_multicast(dst, map, barrier, kAllCtas, inner, outer);
    else
      ptx::tma_load_2d(dst, map, barrier, inner, outer);
  }
}

}  // namespace fgemm::sm90
