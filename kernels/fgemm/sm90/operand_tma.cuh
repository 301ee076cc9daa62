// The one TMA load both operand policies issue for a box of a stage: into this CTA's shared memory, or
// multicast to every CTA of the cluster, from a matrix (2-D map) or a stack of them (3-D map, one per group).
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/ptx.cuh"

namespace fgemm::sm90 {

// The box at (inner, outer) of the map's two dimensions (the contiguous one first), of matrix `group` where
// kStacked.
template <bool kStacked, uint32_t kClusterSize>
__device__ __forceinline__ void load_operand_box(uint8_t* dst, const ptx::TensorMap* map, uint64_t* barrier,
                                                 bool multicast, int32_t inner, int32_t outer, uint32_t group) {
  constexpr uint16_t kAllCtas = (1u << kClusterSize) - 1;
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
