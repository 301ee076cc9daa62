// The operand policy of A and B stored K-major (K contiguous, as "NT" GEMMs take both): each stage holds a box
// of rows x one K block, 128 bytes a row, loaded by the TMA with the 128-byte swizzle, and wgmma reads it
// through a K-major shared-memory descriptor.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/ptx.cuh"
#include "fgemm/sm90/operand_tma.cuh"

namespace fgemm::sm90 {

template <class C>
struct KMajorOperand : OperandDescriptorSteps {
  // Descriptors address shared memory in 16-byte units. One wgmma consumes 32 bytes of K (k32 of FP8, k16 of
  // 16-bit types) from every row of the 128-byte swizzle atom: two units further along the row.
  static constexpr uint64_t kInstructionKStep = 32 / 16;
  static constexpr uint32_t kRowUnit = 8;  // a stage loads whole 8-row swizzle atoms

  __device__ __forceinline__ static uint64_t descriptor(uint32_t smem_address) {
    return ptx::smem_descriptor_k_major_sw128(smem_address);
  }

  // Loads the box of `rows` x one K block at (k0, row0) (of matrix `group` where kStacked) into the stage at
  // `dst`. An operand shared by the cluster is loaded as kMulticastSize slices: with multicast, this CTA loads
  // only its own slice, to all CTAs.
  template <bool kStacked>
  __device__ __forceinline__ static void load(uint8_t* dst, const ptx::TensorMap* map, uint64_t* barrier,
                                              uint32_t slice_rows, uint32_t rows, bool multicast, uint32_t rank,
                                              int32_t k0, int32_t row0, uint32_t group) {
    constexpr uint32_t kRowBytes = C::kBlockK * C::kTile.operand_bytes;
    for (uint32_t slice = 0; slice < rows / slice_rows; ++slice) {
      if (multicast && slice != rank) continue;
      uint8_t* slice_dst = dst + slice * slice_rows * kRowBytes;
      load_operand_box<kStacked, C::kMulticastSize>(slice_dst, map, barrier, multicast, k0,
                                                  row0 + slice * slice_rows, group);
    }
  }
};

}  // namespace fgemm::sm90
