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

  // Waits until the staging buffer may be rewritten: the store issued from it last (by thread 0) has read it.
  __device__ static void wait_until_staging_is_free(uint32_t barrier_id) {
    if (threadIdx.x % 128 == 0) ptx::bulk_wait_group_read_all();
    ptx::named_barrier_sync(barrier_id, 128);
  }

  // Writes pass `pass` of the accumulators (kStagedCols columns) to the staging buffer, in the layout of a TMA
  // store with the kSwizzleDBytes swizzle. Each warp writes its own 16 rows.
  __device__ static void stage(const float (&acc)[kFragments], uint32_t staging_address, uint32_t pass) {
    const uint32_t thread = threadIdx.x % 128, lane = thread % 32;
    constexpr uint32_t kGroups = C::kStagedCols / 8;  // 8-column groups of a pass
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
      // 16-bit: a warp's 16 rows of two column groups are four 8 x 8 matrices, (group jj, rows 0-7), (jj,
      // rows 8-15), (jj + 1, rows 0-7), (jj + 1, rows 8-15): one stmatrix instead of four stores per thread
      // (the epilogue is bound by issuing its instructions). Lane l gives the address of row l % 8 of
      // matrix l / 8.
      const uint32_t matrix = lane / 8;
      const uint32_t matrix_row = (thread / 32) * 16 + (matrix % 2) * 8 + lane % 8;
      auto packed = [&](uint32_t j, uint32_t half) {
        const float low = acc[4 * j + 2 * half], high = acc[4 * j + 2 * half + 1];
        return C::kOutputF16 ? ptx::pack_f16x2(low, high) : ptx::pack_bf16x2(low, high);
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
  }

  // Stages the accumulators in shared memory in kStagingPasses passes of kStagedCols columns, calling
  // store_pass(pass) after each to take the pass to D (store_to_tma or store_rows).
  template <class StorePass>
  __device__ static void staged(const float (&acc)[kFragments], uint8_t* staging, uint32_t barrier_id,
                                StorePass store_pass) {
    const uint32_t staging_address = ptx::smem_address(staging);
#pragma unroll
    for (uint32_t pass = 0; pass < C::kStagingPasses; ++pass) {
      wait_until_staging_is_free(barrier_id);
      stage(acc, staging_address, pass);
      store_pass(pass);
    }
  }

  // Full tiles: one thread stores the staged pass in chunks of kChunkCols columns with the TMA, which clips
  // at the edges of D.
  template <class StoreChunk>
  __device__ static void store_to_tma(const uint8_t* staging, uint32_t barrier_id, uint32_t pass,
                                      StoreChunk store_chunk) {
    ptx::fence_proxy_async_shared();
    ptx::named_barrier_sync(barrier_id, 128);
    if (threadIdx.x % 128 == 0) {
#pragma unroll
      for (uint32_t chunk = 0; chunk < C::kNumChunks; ++chunk)
        store_chunk(staging + chunk * 64 * C::kChunkBytes, pass * C::kStagedCols + chunk * C::kChunkCols);
      ptx::bulk_commit_group();
    }
  }

  // A staged chunk of a full tile to D by the TMA (D a matrix, or a stack of them: `group`'s): written, or, where
  // C is D, added to what D holds.
  __device__ static void tma_chunk(const ptx::TensorMap* map, const uint8_t* chunk, int32_t col, int32_t row) {
    if constexpr (C::kAddToD)
      ptx::tma_add_f32_2d(map, chunk, col, row);
    else
      ptx::tma_store_2d(map, chunk, col, row);
  }
  __device__ static void tma_chunk(const ptx::TensorMap* map, const uint8_t* chunk, int32_t col, int32_t row,
                                   int32_t group) {
    if constexpr (C::kAddToD)
      ptx::tma_add_f32_3d(map, chunk, col, row, group);
    else
      ptx::tma_store_3d(map, chunk, col, row, group);
  }

  // Brings the tile's boxes of D (64 rows x kChunkCols columns each, those the stores take) into L2, where C is D:
  // the TMA's additions then read D from L2 rather than wait for DRAM in the epilogue. `group` is D's matrix in a
  // stack of them.
  template <bool kStackedD>
  __device__ static void prefetch_tile_of_d(const ptx::TensorMap* map, int32_t m0, int32_t n0, uint32_t group) {
#pragma unroll 1
    for (uint32_t row = 0; row < C::kBlockM; row += 64) {
#pragma unroll 1
      for (uint32_t col = 0; col < C::kBlockN; col += C::kChunkCols) {
        if constexpr (kStackedD)
          ptx::tma_prefetch_l2_3d(map, n0 + col, m0 + row, group);
        else
          ptx::tma_prefetch_l2_2d(map, n0 + col, m0 + row);
      }
    }
  }

  // Tiles with rows that must not be written (past masked_m, padding rows of the contiguous layout) or with
  // columns past a ragged edge of D: each warp copies its own 16 staged rows to D one row at a time, 16 bytes
  // per lane, so that each store instruction writes a run of one row. (Each thread storing its own elements
  // from its registers takes 4 (FP32) to 8 (16-bit) times as many store instructions, every one of them
  // spread over 8 rows; such tiles are common: the last of every expert in the contiguous layout, of every
  // group in the masked one.) Rows `actions` says to skip keep what D held, NaN rows are written as NaN, and no
  // column at or past `cols_left` is written; where C is D, a written value is added to what D held. `d` points
  // at the warpgroup's first element; `actions` are the thread's two rows' (the fragment layout's).
  __device__ static void store_rows(const uint8_t* staging, uint32_t pass, void* d, int64_t row_stride,
                                    uint32_t cols_left, const RowAction (&actions)[2]) {
    const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
    const uint32_t staging_address = ptx::smem_address(staging);
    constexpr uint32_t kUnitCols = 16 / C::kOutputBytes;  // columns of a 16-byte unit
    constexpr uint32_t kUnitsPerRow = C::kStagedCols / kUnitCols;
    constexpr uint32_t kNaN = C::kOutputF32 ? 0x7fc00000u : C::kOutputF16 ? 0x7e007e00u : 0x7fc07fc0u;
    __syncwarp();
    // Bit i of each mask is row i of the warp's 16, whose action lanes 4 (i % 8) to 4 (i % 8) + 3 hold (their
    // first row for i < 8, their second for i >= 8): the loop visits only the rows written, with a few ballots
    // (where one shuffle per row made tiles of a few rows, split-K's or a decode step's, slow to store).
    const uint32_t written[2] = {__ballot_sync(0xffffffff, actions[0] != RowAction::Skip),
                                 __ballot_sync(0xffffffff, actions[1] != RowAction::Skip)};
    const uint32_t nan[2] = {__ballot_sync(0xffffffff, actions[0] == RowAction::WriteNaN),
                             __ballot_sync(0xffffffff, actions[1] == RowAction::WriteNaN)};
    uint32_t rows_written = 0, rows_nan = 0;
#pragma unroll
    for (uint32_t i = 0; i < 16; ++i) {
      rows_written |= (written[i / 8] >> (i % 8 * 4) & 1u) << i;
      rows_nan |= (nan[i / 8] >> (i % 8 * 4) & 1u) << i;
    }
    // Not unrolled: sixteen copies of a row's copy would only make the kernel longer.
#pragma unroll 1
    for (uint32_t rows_left = rows_written; rows_left != 0; rows_left &= rows_left - 1) {
      const uint32_t i = __ffs(rows_left) - 1;
      const RowAction action = rows_nan >> i & 1u ? RowAction::WriteNaN : RowAction::Write;
      const uint32_t row = warp * 16 + i;
      uint8_t* d_row = static_cast<uint8_t*>(d) + row * row_stride * C::kOutputBytes;
#pragma unroll
      for (uint32_t round = 0; round < ceil_div(kUnitsPerRow, 32u); ++round) {
        const uint32_t unit = round * 32 + lane;
        const uint32_t col = pass * C::kStagedCols + unit * kUnitCols;
        if (unit >= kUnitsPerRow || col >= cols_left) break;
        ptx::U32x4 v{{kNaN, kNaN, kNaN, kNaN}};
        if (action == RowAction::Write)
          v = ptx::load_shared_u32x4(staging_address + staged_offset(row, unit * kUnitCols));
        const bool add = C::kAddToD && action == RowAction::Write;
        // Where rows of D are whole 16-byte units (not kRaggedN), so is every unit left of cols_left.
        if (!C::kRaggedN || col + kUnitCols <= cols_left) {
          if (add) {
            const ptx::U32x4 held = ptx::load_global_u32x4(d_row + col * C::kOutputBytes);
#pragma unroll
            for (uint32_t e = 0; e < 4; ++e)
              v.word[e] = __float_as_uint(__uint_as_float(v.word[e]) + __uint_as_float(held.word[e]));
          }
          ptx::store_global_u32x4(d_row + col * C::kOutputBytes, v);
          continue;
        }
        // The ragged edge: element by element (unrolled, so that the words are registers, not an array).
#pragma unroll
        for (uint32_t e = 0; e < kUnitCols; ++e) {
          if (col + e >= cols_left) break;
          if constexpr (C::kOutputF32) {
            uint32_t* element = reinterpret_cast<uint32_t*>(d_row) + col + e;
            *element = add ? __float_as_uint(__uint_as_float(v.word[e]) + __uint_as_float(*element)) : v.word[e];
          } else {
            reinterpret_cast<uint16_t*>(d_row)[col + e] = static_cast<uint16_t>(v.word[e / 2] >> (16 * (e % 2)));
          }
        }
      }
    }
  }
};

}  // namespace fgemm::sm90
