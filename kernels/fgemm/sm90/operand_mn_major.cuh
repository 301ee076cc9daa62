// The operand policy of A or B stored MN-major (M or N contiguous: A as [K, M], B as [K, N]), for the 16-bit
// types, whose wgmma reads such operands through its transpose bits (FP8's reads K-major ones only). Each
// stage holds one K block (kBlockK rows of K) of the tile's rows of M or N, as boxes of kRun elements of M or N
// (one swizzle row: 64 elements and the 128-byte swizzle, or 32 and the 64-byte one, as TileConfig::
// mn_major_run_a/b choose) by kBlockK rows of K, one after the other, each loaded by the TMA with that swizzle:
// the layout wgmma's MN-major descriptor describes, with one run of M or N per box.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/ptx.cuh"
#include "fgemm/sm90/operand_tma.cuh"

namespace fgemm::sm90 {

template <class C, uint32_t kRun>
struct MnMajorOperand : OperandDescriptorSteps {
  static_assert(C::kTile.operand_bytes == 2, "MN-major operands are 16-bit: FP8 wgmma reads K-major ones only");
  static_assert(kRun == 64 || kRun == 32, "a box is one swizzle row of 128 or 64 bytes");
  static constexpr uint32_t kSwizzleBytes = kRun * 2;
  static constexpr uint32_t kRowUnit = kRun;                         // a stage loads whole boxes of rows
  static constexpr uint32_t kBoxBytes = C::kBlockK * kSwizzleBytes;  // kBlockK rows of K, a swizzle row each
  // One wgmma consumes 16 rows of K (k16), 16 swizzle rows further on, in 16-byte descriptor units.
  static constexpr uint64_t kInstructionKStep = 16 * kSwizzleBytes / 16;

  __device__ __forceinline__ static uint64_t descriptor(uint32_t smem_address) {
    return ptx::smem_descriptor_mn_major<kSwizzleBytes>(smem_address, kBoxBytes);
  }

  // Loads rows [row0, row0 + rows) of M or N x the K block at k0 (of matrix `group` where kStacked), as
  // kMulticastSize slices of whole boxes where the cluster shares the operand (multicast: only this CTA's slice).
  // The tensor map's inner dimension is M or N, its outer K.
  template <bool kStacked>
  __device__ __forceinline__ static void load(uint8_t* dst, const ptx::TensorMap* map, uint64_t* barrier,
                                              uint32_t slice_rows, uint32_t rows, bool multicast, uint32_t rank,
                                              int32_t k0, int32_t row0, uint32_t group) {
    for (uint32_t box = 0; box < rows / kRun; ++box) {
      if (multicast && box * kRun / slice_rows != rank) continue;
      load_operand_box<kStacked, C::kMulticastSize>(dst + box * kBoxBytes, map, barrier, multicast,
                                                  row0 + box * kRun, k0, group);
    }
  }
};

}  // namespace fgemm::sm90
