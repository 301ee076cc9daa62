// Writing a math warpgroup's 64 x kWarpgroupN FP32 accumulators to D. In the wgmma fragment layout, thread t of
// the warpgroup holds, for each 8-column group j, columns 8j + 2(t % 4) + {0, 1} of rows r0 = 16(t / 32) +
// (t % 32) / 4 and r0 + 8: acc[4j + 0..1] and acc[4j + 2..3].
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/ptx.cuh"

namespace fgemm::sm90 {

// What a thread does with one of its two rows.
enum class RowAction : uint32_t { Skip, Write, WriteNaN };

template <class C>
struct Epilogue {
  static constexpr uint32_t kFragments = C::kWarpgroupN / 2;

  // Where row `row`, column `col` of a staging pass lies in the staging buffer: chunks of kChunkCols columns
  // one after the other, each 64 rows of kChunkBytes, with the TMA swizzle (16-byte unit bits [4, 7) XORed
  // with the 128-byte row bits [7, 10)), which keeps the stores free of bank conflicts.
  __device__ static uint32_t staged_offset(uint32_t row, uint32_t col) {
    uint32_t offset =
        (col / C::kChunkCols) * 64 * C::kChunkBytes + row * C::kChunkBytes + (col % C::kChunkCols) * C::kOutputBytes;
    if constexpr (C::kSwizzleDBytes != 0) offset ^= ((offset >> 7) & (C::kSwizzleDBytes / 16 - 1)) << 4;
    return offset;
  }

  // Full tiles: the accumulators go to shared memory in the layout of a TMA store with the kSwizzleDBytes
  // swizzle, then one thread stores them in chunks of kChunkCols columns; in kStagingPasses passes of
  // kStagedCols columns. TMA clips at the edges of D. The staging buffer is rewritten (by the next pass or
  // tile) only after the previous store has read it.
  template <class StoreChunk>
  __device__ static void through_tma(const float (&acc)[kFragments], uint8_t* staging, uint32_t barrier_id,
                                     StoreChunk store_chunk) {
    const uint32_t thread = threadIdx.x % 128, lane = thread % 32;
    const uint32_t staging_address = ptx::smem_address(staging);
    constexpr uint32_t kGroups = C::kStagedCols / 8;  // 8-column groups of a pass
#pragma unroll
    for (uint32_t pass = 0; pass < C::kStagingPasses; ++pass) {
      if (thread == 0) ptx::bulk_wait_group_read_all();
      ptx::named_barrier_sync(barrier_id, 128);
      if constexpr (C::kOutputF32) {
        const uint32_t row_in_wg = (thread / 32) * 16 + lane / 4;
#pragma unroll
        for (uint32_t jj = 0; jj < kGroups; ++jj) {
          const uint32_t j = pass * kGroups + jj;  // the column group in the warpgroup's columns
#pragma unroll
          for (uint32_t half = 0; half < 2; ++half)
            ptx::store_shared_f32x2(staging_address + staged_offset(row_in_wg + half * 8, jj * 8 + lane % 4 * 2),
                                    acc[4 * j + 2 * half], acc[4 * j + 2 * half + 1]);
        }
      } else {
        // BF16: a warp's 16 rows of two column groups are four 8 x 8 matrices, (group jj, rows 0-7), (jj,
        // rows 8-15), (jj + 1, rows 0-7), (jj + 1, rows 8-15): one stmatrix instead of four stores per thread
        // (the epilogue is bound by issuing its instructions). Lane l gives the address of row l % 8 of
        // matrix l / 8.
        const uint32_t matrix = lane / 8;
        const uint32_t matrix_row = (thread / 32) * 16 + (matrix % 2) * 8 + lane % 8;
        auto packed = [&](uint32_t j, uint32_t half) {
          return ptx::pack_bf16x2(acc[4 * j + 2 * half], acc[4 * j + 2 * half + 1]);
        };
#pragma unroll
        for (uint32_t jj = 0; jj < kGroups; jj += 2) {
          const uint32_t j = pass * kGroups + jj;
          const uint32_t address = staging_address + staged_offset(matrix_row, (jj + matrix / 2) * 8);
          if (jj + 1 < kGroups)
            ptx::stmatrix_x4(address, packed(j, 0), packed(j, 1), packed(j + 1, 0), packed(j + 1, 1));
          else  // an odd last group: lanes 16-31 give no address
            ptx::stmatrix_x2(address, packed(j, 0), packed(j, 1));
        }
      }
      ptx::fence_proxy_async_shared();
      ptx::named_barrier_sync(barrier_id, 128);
      if (thread == 0) {
#pragma unroll
        for (uint32_t chunk = 0; chunk < C::kNumChunks; ++chunk)
          store_chunk(staging + chunk * 64 * C::kChunkBytes, pass * C::kStagedCols + chunk * C::kChunkCols);
        ptx::bulk_commit_group();
      }
    }
  }

  // Tiles with rows that must not be written (past masked_m, padding rows of the contiguous layout): each
  // thread stores its own elements, row by row as `actions` says, and no column at or past `cols_left`.
  // `d` points at the warpgroup's first element.
  __device__ static void direct(const float (&acc)[kFragments], void* d, int64_t row_stride, uint32_t cols_left,
                                const RowAction (&actions)[2]) {
    const uint32_t thread = threadIdx.x % 128;
    const uint32_t row_in_wg = (thread / 32) * 16 + thread % 32 / 4;
    const uint32_t col_in_group = thread % 4 * 2;
    const float nan = __int_as_float(0x7fc00000);
#pragma unroll
    for (uint32_t half = 0; half < 2; ++half) {
      if (actions[half] == RowAction::Skip) continue;
      const int64_t row_offset = static_cast<int64_t>(row_in_wg + half * 8) * row_stride;
#pragma unroll
      for (uint32_t j = 0; j < C::kWarpgroupN / 8; ++j) {
#pragma unroll
        for (uint32_t e = 0; e < 2; ++e) {
          const uint32_t col = j * 8 + col_in_group + e;
          if (col >= cols_left) continue;
          const float value = actions[half] == RowAction::Write ? acc[4 * j + 2 * half + e] : nan;
          if constexpr (C::kOutputF32)
            static_cast<float*>(d)[row_offset + col] = value;
          else
            static_cast<uint16_t*>(d)[row_offset + col] = static_cast<uint16_t>(ptx::pack_bf16x2(value, 0.0f));
        }
      }
    }
  }
};

}  // namespace fgemm::sm90
