// The fused cast-transpose of FP8 training's backward pass: x [M, K] read once and quantized twice, per 1 x 128
// block of its rows (the codes and scales of per_token_cast_to_fp8(x)) and per 128 x 1 block of its columns,
// written transposed (those of per_token_cast_to_fp8(x^T)); or, for a weight (kBlockScaled), per 128 x 128 block,
// the same codes written both ways (those of per_block_cast_to_fp8(x) and of per_block_cast_to_fp8(x^T)). The
// arithmetic is the one documented in include/fgemm/quantize.hpp; the code format is a Format policy
// (quantize_e4m3.cuh).
#pragma once

#include "fgemm/ptx.cuh"
#include "fgemm/quantize.cuh"

namespace fgemm::quant {

constexpr uint32_t kTileRowsPerThread = 4;  // one word of four transposed codes
constexpr uint32_t kThreadsPerTileRow = kBlock / kElementsPerThread;

// The 16 elements of a row at column `col` (of `cols`) as the input's bits, packed as In::packed reads them;
// those at or beyond `cols` read as +0. kVectorized: as load_elements.
template <typename In, bool kVectorized>
__device__ __forceinline__ void load_bits(const uint8_t* row, uint32_t col, uint32_t cols,
                                          uint32_t (&words)[kElementsPerThread * In::kBytes / 4]) {
  const uint8_t* first = row + static_cast<uint64_t>(col) * In::kBytes;
  if (kVectorized) {
#pragma unroll
    for (uint32_t v = 0; v < In::kBytes; ++v) {
      if (col < cols) {
        load_16_bytes(first + 16 * v, words + 4 * v);
      } else {
#pragma unroll
        for (uint32_t w = 0; w < 4; ++w) words[4 * v + w] = 0;
      }
    }
  } else {
    constexpr uint32_t kPerWord = 4 / In::kBytes;
#pragma unroll
    for (uint32_t w = 0; w < kElementsPerThread / kPerWord; ++w) words[w] = 0;
#pragma unroll
    for (uint32_t i = 0; i < kElementsPerThread; ++i) {
      if (col + i < cols) {
        const uint8_t* element = first + i * In::kBytes;
        const uint32_t bits = In::kBytes == 2 ? load_u16(element) : load_u32(element);
        words[i / kPerWord] |= bits << (8 * In::kBytes * (i % kPerWord));
      }
    }
  }
}

template <typename In>
__device__ __forceinline__ void unpack(const uint32_t (&words)[kElementsPerThread * In::kBytes / 4],
                                       float (&values)[kElementsPerThread]) {
#pragma unroll
  for (uint32_t i = 0; i < kElementsPerThread; ++i) values[i] = In::packed(words, i);
}

// The scales of activations: each of the thread's rows per 1 x 128 block (its eight threads meeting by shuffles),
// its row-wise codes stored from registers; each column's over the tile's 128 rows, whose inverses go to
// col_inverse and scales to sft.
template <typename In, typename Format, uint32_t kCols, bool kVectorized>
__device__ __forceinline__ void row_and_column_scales(
    const CastTransposeParams& p, const uint32_t (&words)[kTileRowsPerThread][kElementsPerThread * In::kBytes / 4],
    uint32_t group, uint32_t first_row, uint32_t col, uint32_t row_block, uint32_t col0, uint32_t slice,
    float (&col_inverse)[kBlock]) {
  __shared__ float warp_col_amax[kWarpsPerCta][kBlock];
  const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32, col_block = col0 / kBlock;
  // Each column's maximum over the thread's rows, then over the warp's (lanes 8 and 16 apart share columns).
  float col_amax[kElementsPerThread];
#pragma unroll
  for (uint32_t j = 0; j < kElementsPerThread; ++j) col_amax[j] = 0.0f;
#pragma unroll
  for (uint32_t i = 0; i < kTileRowsPerThread; ++i) {
    float values[kElementsPerThread];
    unpack<In>(words[i], values);
#pragma unroll
    for (uint32_t j = 0; j < kElementsPerThread; ++j) col_amax[j] = max_nan(col_amax[j], abs_f32(values[j]));
  }
#pragma unroll
  for (uint32_t j = 0; j < kElementsPerThread; ++j) {
    col_amax[j] = max_nan(col_amax[j], __shfl_xor_sync(0xFFFFFFFFu, col_amax[j], 8));
    col_amax[j] = max_nan(col_amax[j], __shfl_xor_sync(0xFFFFFFFFu, col_amax[j], 16));
  }
  if (lane < kThreadsPerTileRow) {
#pragma unroll
    for (uint32_t j = 0; j < kElementsPerThread; ++j) warp_col_amax[warp][slice * kElementsPerThread + j] = col_amax[j];
  }

  // The row-wise codes and scales, while the other warps reach the barrier.
#pragma unroll
  for (uint32_t i = 0; i < kTileRowsPerThread; ++i) {
    const uint32_t row = first_row + i;
    float values[kElementsPerThread];
    unpack<In>(words[i], values);
    const Scale s = Format::scale_of(lanes_amax<kThreadsPerTileRow>(thread_amax(values)));
    uint32_t codes[4];
    quantize<Format>(values, s.inverse, codes);
    store_codes<kVectorized>(p.q.data + p.q.offset(group, row, 0), col, row < p.rows ? kCols : 0, codes);
    if (slice == 0 && row < p.rows) p.sf.data[p.sf.offset(group, row, col_block)] = s.scale;
  }
  __syncthreads();

  if (threadIdx.x < kBlock) {
    const uint32_t c = threadIdx.x;
    float amax = warp_col_amax[0][c];
#pragma unroll
    for (uint32_t w = 1; w < kWarpsPerCta; ++w) amax = max_nan(amax, warp_col_amax[w][c]);
    const Scale s = Format::scale_of(amax);
    col_inverse[c] = s.inverse;
    if (col0 + c < kCols) p.sft.data[p.sft.offset(group, col0 + c, row_block)] = s.scale;
  }
  __syncthreads();
}

// The scales of a weight: one for the tile, from the amax of all its elements; the row-wise codes stored from
// registers, the same inverse for every column in col_inverse, the scale in sf and, transposed, in sft.
template <typename In, typename Format, uint32_t kCols, bool kVectorized>
__device__ __forceinline__ void block_scales(
    const CastTransposeParams& p, const uint32_t (&words)[kTileRowsPerThread][kElementsPerThread * In::kBytes / 4],
    uint32_t group, uint32_t first_row, uint32_t col, uint32_t row_block, uint32_t col_block,
    float (&col_inverse)[kBlock]) {
  float amax = 0.0f;
#pragma unroll
  for (uint32_t i = 0; i < kTileRowsPerThread; ++i) {
    float values[kElementsPerThread];
    unpack<In>(words[i], values);
    amax = max_nan(amax, thread_amax(values));
  }
  const Scale s = Format::scale_of(team_amax<kThreadsPerCta>(amax));
#pragma unroll
  for (uint32_t i = 0; i < kTileRowsPerThread; ++i) {
    const uint32_t row = first_row + i;
    float values[kElementsPerThread];
    unpack<In>(words[i], values);
    uint32_t codes[4];
    quantize<Format>(values, s.inverse, codes);
    store_codes<kVectorized>(p.q.data + p.q.offset(group, row, 0), col, row < p.rows ? kCols : 0, codes);
  }
  if (threadIdx.x == 0) {
    p.sf.data[p.sf.offset(group, row_block, col_block)] = s.scale;
    p.sft.data[p.sft.offset(group, col_block, row_block)] = s.scale;
  }
  if (threadIdx.x < kBlock) col_inverse[threadIdx.x] = s.inverse;
  __syncthreads();
}

// Grid: (row blocks of the launch * column blocks, matrices of the stack). A CTA quantizes one 128 x 128 tile of
// x. Thread t holds the input bits of columns 16 (t % 8) .. +16 of the four consecutive rows 4 (t / 8) .. +4, so
// that the codes of one column for those rows make one word. Rows and columns beyond x read as zeros and write
// nothing.
//
// The row-wise codes go out from registers, a row's eight threads meeting by shuffles. For the columns, each
// warp's maxima meet in shared memory, where 128 threads take each column's scale. With kBlockScaled the whole
// CTA meets once for the tile's one scale, which both the rows and the columns take. The transposed codes go out
// through a shared-memory tile of words, [column][four rows], whose word index is XOR-ed with 4 (column / 16):
// then the 32 words a warp writes at once fall in 32 banks, and each 16-byte read of 16 codes of one column
// stays whole.
template <typename In, typename Format, uint32_t kCols, bool kVectorized, bool kTransposedVectorized,
          bool kBlockScaled>
__device__ __forceinline__ void cast_transpose(const CastTransposeParams& p) {
  constexpr uint32_t kColBlocks = ceil_div(kCols, kBlock);
  constexpr uint32_t kWords = kElementsPerThread * In::kBytes / 4;
  constexpr uint32_t kWordsPerColumn = kBlock / kTileRowsPerThread;
  static_assert(kThreadsPerCta == kThreadsPerTileRow * kBlock / kTileRowsPerThread, "a CTA holds a whole tile");
  __shared__ float col_inverse[kBlock];
  __shared__ __align__(16) uint32_t transposed[kBlock][kWordsPerColumn];

  const uint32_t row_block = p.first_row_block + blockIdx.x / kColBlocks, col_block = blockIdx.x % kColBlocks;
  const uint32_t group = blockIdx.y;
  const uint32_t slice = threadIdx.x % kThreadsPerTileRow;  // the thread's 16 columns
  const uint32_t quad = threadIdx.x / kThreadsPerTileRow;   // the thread's four rows
  const uint32_t row0 = row_block * kBlock, col0 = col_block * kBlock;
  const uint32_t first_row = row0 + quad * kTileRowsPerThread, col = col0 + slice * kElementsPerThread;

  // The band of the outputs' rows this tile lies in, and where its rows are in x.
  uint32_t b = 0;
  while (b + 1 < p.bands && p.band[b + 1].first_row <= row0) ++b;
  const TransposedBand& band = p.band[b];

  uint32_t words[kTileRowsPerThread][kWords];
#pragma unroll
  for (uint32_t i = 0; i < kTileRowsPerThread; ++i) {
    const uint32_t row_in_band = first_row + i - band.first_row;  // the padding rows past x_rows read as zeros
    const uint32_t x_row = band.x_first_row + row_in_band;
    load_bits<In, kVectorized>(p.x.data + p.x.offset(group, x_row, 0) * In::kBytes, col,
                               row_in_band < band.x_rows ? kCols : 0, words[i]);
  }

  if constexpr (kBlockScaled) {
    block_scales<In, Format, kCols, kVectorized>(p, words, group, first_row, col, row_block, col_block,
                                                 col_inverse);
  } else {
    row_and_column_scales<In, Format, kCols, kVectorized>(p, words, group, first_row, col, row_block, col0, slice,
                                                          col_inverse);
  }

#pragma unroll
  for (uint32_t j = 0; j < kElementsPerThread; ++j) {
    const uint32_t c = slice * kElementsPerThread + j;
    float values[kTileRowsPerThread];
#pragma unroll
    for (uint32_t i = 0; i < kTileRowsPerThread; ++i) values[i] = mul_rn(In::packed(words[i], j), col_inverse[c]);
    transposed[c][quad ^ (4 * slice)] = Format::pack4(values[0], values[1], values[2], values[3]);
  }
  __syncthreads();

  // Each of the tile's 128 columns is one row of 128 codes of the transpose: eight threads store it, 16 codes each.
  constexpr uint32_t kChunksPerColumn = kBlock / kElementsPerThread;
#pragma unroll
  for (uint32_t pass = 0; pass < kBlock * kChunksPerColumn / kThreadsPerCta; ++pass) {
    const uint32_t chunk = pass * kThreadsPerCta + threadIdx.x;
    const uint32_t c = chunk / kChunksPerColumn, part = chunk % kChunksPerColumn;
    const uint32_t* words_of_part = &transposed[c][4 * (part ^ (c / kElementsPerThread))];
    const ptx::U32x4 stored = ptx::load_shared_u32x4(ptx::smem_address(words_of_part));
    const uint32_t codes[4] = {stored.word[0], stored.word[1], stored.word[2], stored.word[3]};
    uint8_t* qt_row =
        p.qt + group * p.qt_group_stride + band.offset + static_cast<int64_t>(col0 + c) * band.row_stride;
    store_codes<kTransposedVectorized>(qt_row, row0 - band.first_row + part * kElementsPerThread,
                                       col0 + c < kCols ? band.rows : 0, codes);
  }
}

}  // namespace fgemm::quant
