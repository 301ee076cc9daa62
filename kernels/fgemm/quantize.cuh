// Quantization of BF16, FP16 or FP32 tensors with fine-grained scales, for every symmetric code format (the
// `Format` parameter: E4m3 of quantize_e4m3.cuh, Int8 of quantize_int8.cuh), and a copy of FP32 scales between
// two layouts. A scale covers a 1 x G block (per token group), a whole row, or a 128 x 128 block. The arithmetic
// is the one documented in include/fgemm/quantize.hpp and include/fgemm/quantize_int8.hpp.
//
// Each thread owns slices of 16 consecutive elements of a row: one 16-byte store of codes, and one to four
// 16-byte loads of input, per slice. The input is read once, into registers, and each code and scale is written
// once (rows longer than kRowHeldCols excepted, see per_row_cast).
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/quantize_math.cuh"
#include "fgemm/quantize_params.cuh"

namespace fgemm::quant {

// ---- global memory ------------------------------------------------------------------------------------

// Reads of the input, which the kernel never writes (so the non-coherent path is safe); volatile keeps each
// behind the bounds check that guards it.

// A streaming read of 16 bytes, which no thread reads again.
__device__ __forceinline__ void load_16_bytes(const void* pointer, uint32_t* words) {
  asm volatile("ld.global.nc.L1::no_allocate.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(words[0]), "=r"(words[1]), "=r"(words[2]), "=r"(words[3])
               : "l"(pointer));
}

__device__ __forceinline__ uint32_t load_u16(const void* pointer) {
  uint32_t value;
  asm volatile("ld.global.nc.u16 %0, [%1];" : "=r"(value) : "l"(pointer));
  return value;
}

__device__ __forceinline__ uint32_t load_u32(const void* pointer) {
  uint32_t value;
  asm volatile("ld.global.nc.b32 %0, [%1];" : "=r"(value) : "l"(pointer));
  return value;
}

__device__ __forceinline__ void store_16_bytes(void* pointer, const uint32_t* words) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(pointer), "r"(words[0]), "r"(words[1]), "r"(words[2]),
               "r"(words[3])
               : "memory");
}

__device__ __forceinline__ void store_u8(void* pointer, uint32_t value) {
  asm volatile("st.global.u8 [%0], %1;" ::"l"(pointer), "r"(value) : "memory");
}

// ---- input element types --------------------------------------------------------------------------------

struct Bf16 {
  static constexpr uint32_t kBytes = 2;
  // Element i of consecutive elements packed in 32-bit words.
  __device__ static float packed(const uint32_t* words, uint32_t i) {
    return float_from_bits((words[i / 2] >> (16 * (i % 2))) << 16);
  }
  __device__ static float load_one(const void* pointer) { return float_from_bits(load_u16(pointer) << 16); }
};

// IEEE binary16: every value converts to FP32 exactly, subnormals included.
struct F16 {
  static constexpr uint32_t kBytes = 2;
  __device__ static float from_bits(uint32_t bits) {
    float r;
    asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(static_cast<uint16_t>(bits)));
    return r;
  }
  __device__ static float packed(const uint32_t* words, uint32_t i) {
    return from_bits(words[i / 2] >> (16 * (i % 2)));
  }
  __device__ static float load_one(const void* pointer) { return from_bits(load_u16(pointer)); }
};

struct F32 {
  static constexpr uint32_t kBytes = 4;
  __device__ static float packed(const uint32_t* words, uint32_t i) { return float_from_bits(words[i]); }
  __device__ static float load_one(const void* pointer) { return float_from_bits(load_u32(pointer)); }
};

// ---- one thread's slice of 16 elements ---------------------------------------------------------------

// Loads the 16 elements of a row at column `col` (of `cols`) as FP32; those at or beyond `cols` read as 0.
// kVectorized: 16-byte accesses, which the host allows when every thread's elements are 16-byte aligned and
// lie wholly inside or wholly outside the row; otherwise one element at a time.
template <typename In, bool kVectorized>
__device__ __forceinline__ void load_elements(const uint8_t* row, uint32_t col, uint32_t cols,
                                              float (&values)[kElementsPerThread]) {
  const uint8_t* first = row + static_cast<uint64_t>(col) * In::kBytes;
  if (kVectorized) {
    uint32_t words[kElementsPerThread * In::kBytes / 4];
    const bool inside = col < cols;
#pragma unroll
    for (uint32_t v = 0; v < In::kBytes; ++v) {
      if (inside) {
        load_16_bytes(first + 16 * v, words + 4 * v);
      } else {
#pragma unroll
        for (uint32_t w = 0; w < 4; ++w) words[4 * v + w] = 0;
      }
    }
#pragma unroll
    for (uint32_t i = 0; i < kElementsPerThread; ++i) values[i] = In::packed(words, i);
  } else {
#pragma unroll
    for (uint32_t i = 0; i < kElementsPerThread; ++i)
      values[i] = col + i < cols ? In::load_one(first + i * In::kBytes) : 0.0f;
  }
}

template <bool kVectorized>
__device__ __forceinline__ void store_codes(uint8_t* row, uint32_t col, uint32_t cols, const uint32_t (&codes)[4]) {
  if (kVectorized) {
    if (col < cols) store_16_bytes(row + col, codes);
  } else {
#pragma unroll
    for (uint32_t i = 0; i < kElementsPerThread; ++i)
      if (col + i < cols) store_u8(row + col + i, (codes[i / 4] >> (8 * (i % 4))) & 0xFF);
  }
}

__device__ __forceinline__ float thread_amax(const float (&values)[kElementsPerThread]) {
  float amax = 0.0f;
#pragma unroll
  for (uint32_t i = 0; i < kElementsPerThread; ++i) amax = max_nan(amax, abs_f32(values[i]));
  return amax;
}

// The NaN-propagating maximum over groups of `kLanes` consecutive lanes (a power of two up to 32).
template <uint32_t kLanes>
__device__ __forceinline__ float lanes_amax(float amax) {
#pragma unroll
  for (uint32_t offset = kLanes / 2; offset > 0; offset /= 2)
    amax = max_nan(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, offset));
  return amax;
}

// The NaN-propagating maximum over the `kThreads` consecutive threads of a team (a power of two up to a CTA;
// teams of more than a warp are whole warps). A team of more than a warp meets through shared memory, so every
// thread of the CTA must call this, once.
template <uint32_t kThreads>
__device__ __forceinline__ float team_amax(float amax) {
  if constexpr (kThreads <= 32) {
    return lanes_amax<kThreads>(amax);
  } else {
    constexpr uint32_t kWarps = kThreads / 32;
    __shared__ float warp_amax[kWarpsPerCta];
    amax = lanes_amax<32>(amax);
    if (threadIdx.x % 32 == 0) warp_amax[threadIdx.x / 32] = amax;
    __syncthreads();
    // The team's first warp; spelt out as 0 for a whole CTA, as the compiler cannot tell threadIdx.x < kThreadsPerCta.
    const uint32_t first = kThreads == kThreadsPerCta ? 0 : threadIdx.x / kThreads * kWarps;
    amax = warp_amax[first];
#pragma unroll
    for (uint32_t w = 1; w < kWarps; ++w) amax = max_nan(amax, warp_amax[first + w]);
    return amax;
  }
}

// The codes of one slice: each element times `inverse`, rounded once, then converted by the format.
template <typename Format>
__device__ __forceinline__ void quantize(const float (&values)[kElementsPerThread], float inverse,
                                         uint32_t (&codes)[4]) {
#pragma unroll
  for (uint32_t i = 0; i < 4; ++i)
    codes[i] = Format::pack4(mul_rn(values[4 * i], inverse), mul_rn(values[4 * i + 1], inverse),
                             mul_rn(values[4 * i + 2], inverse), mul_rn(values[4 * i + 3], inverse));
}

// ---- per token group: one warp per 512 columns of one row ------------------------------------------------

// Grid: (ceil(rows * kChunks / kWarpsPerCta), groups); each warp quantizes 512 columns ("a chunk") of one
// row, each group of kGroupCols / 16 consecutive lanes one 1 x kGroupCols block.
template <typename In, typename Format, uint32_t kCols, uint32_t kGroupCols, bool kVectorized>
__device__ __forceinline__ void per_token_group_cast(const QuantizeParams& p) {
  static_assert(kGroupCols % kElementsPerThread == 0 && kColsPerWarp % kGroupCols == 0,
                "a group is whole slices of one warp's chunk");
  constexpr uint32_t kLanesPerGroup = kGroupCols / kElementsPerThread;
  constexpr uint32_t kColsPerChunk = kColsPerWarp;
  constexpr uint32_t kChunks = ceil_div(kCols, kColsPerChunk);
  const uint32_t lane = threadIdx.x % 32;
  const uint64_t task = static_cast<uint64_t>(blockIdx.x) * kWarpsPerCta + threadIdx.x / 32;
  const uint64_t row = task / kChunks;
  if (row >= p.rows) return;  // the same for the whole warp, which then has no shuffle to join
  const uint32_t col = static_cast<uint32_t>(task % kChunks) * kColsPerChunk + lane * kElementsPerThread;

  float values[kElementsPerThread];
  load_elements<In, kVectorized>(p.x.data + p.x.offset(blockIdx.y, row, 0) * In::kBytes, col, kCols, values);
  const Scale s = Format::scale_of(lanes_amax<kLanesPerGroup>(thread_amax(values)));
  uint32_t codes[4];
  quantize<Format>(values, s.inverse, codes);
  store_codes<kVectorized>(p.q.data + p.q.offset(blockIdx.y, row, 0), col, kCols, codes);
  if (lane % kLanesPerGroup == 0 && col < kCols) p.sf.data[p.sf.offset(blockIdx.y, row, col / kGroupCols)] = s.scale;
}

// ---- per row: one scale for a whole row ----------------------------------------------------------------

// Grid: (ceil(rows / rows per CTA), groups). A team of row_team_threads(kCols) consecutive threads quantizes
// one row: member t owns the slices at columns 16 (t + i * team), i = 0 .. row_slices(kCols) - 1, so that the
// team's accesses of one pass lie side by side. A row of at most kRowHeldCols columns stays in registers
// from its maximum to its codes; a longer one, which they cannot hold, is read a second time for its codes
// (mostly from L2).
template <typename In, typename Format, uint32_t kCols, bool kVectorized>
__device__ __forceinline__ void per_row_cast(const QuantizeParams& p) {
  constexpr uint32_t kTeam = row_team_threads(kCols);
  constexpr uint32_t kSlices = row_slices(kCols);
  constexpr bool kHeld = kCols <= kRowHeldCols;
  const uint32_t member = threadIdx.x % kTeam;
  const uint64_t row = static_cast<uint64_t>(blockIdx.x) * (kThreadsPerCta / kTeam) + threadIdx.x / kTeam;
  // A row beyond the matrix reads as zeros (past every column) and writes nothing; its team still meets.
  const uint32_t cols = row < p.rows ? kCols : 0;
  const uint8_t* x = p.x.data + p.x.offset(blockIdx.y, row, 0) * In::kBytes;
  uint8_t* q = p.q.data + p.q.offset(blockIdx.y, row, 0);

  float values[kHeld ? kSlices : 1][kElementsPerThread];
  float amax = 0.0f;
#pragma unroll (kHeld ? kSlices : 4)
  for (uint32_t i = 0; i < kSlices; ++i) {
    float(&slice)[kElementsPerThread] = values[kHeld ? i : 0];
    load_elements<In, kVectorized>(x, (i * kTeam + member) * kElementsPerThread, cols, slice);
    amax = max_nan(amax, thread_amax(slice));
  }
  const Scale s = Format::scale_of(team_amax<kTeam>(amax));
#pragma unroll (kHeld ? kSlices : 4)
  for (uint32_t i = 0; i < kSlices; ++i) {
    const uint32_t col = (i * kTeam + member) * kElementsPerThread;
    float(&slice)[kElementsPerThread] = values[kHeld ? i : 0];
    if (!kHeld) load_elements<In, kVectorized>(x, col, cols, slice);
    uint32_t codes[4];
    quantize<Format>(slice, s.inverse, codes);
    store_codes<kVectorized>(q, col, cols, codes);
  }
  if (member == 0 && row < p.rows) p.sf.data[p.sf.offset(blockIdx.y, row, 0)] = s.scale;
}

// ---- per 128 x 128 block: one CTA per block ------------------------------------------------------------

// Grid: (row blocks * column blocks, groups). The 256 threads hold the block in registers: thread t owns
// columns 16 * (t % 8) .. +16 of rows t / 8 + 32 * i, i = 0..3.
template <typename In, typename Format, uint32_t kCols, bool kVectorized>
__device__ __forceinline__ void per_block_cast(const QuantizeParams& p) {
  constexpr uint32_t kThreadsPerBlockRow = kBlock / kElementsPerThread;
  constexpr uint32_t kColBlocks = ceil_div(kCols, kBlock);
  constexpr uint32_t kRowsPerPass = kThreadsPerCta / kThreadsPerBlockRow;
  constexpr uint32_t kPasses = kBlock / kRowsPerPass;

  const uint32_t row_block = blockIdx.x / kColBlocks, col_block = blockIdx.x % kColBlocks;
  const uint32_t col = col_block * kBlock + (threadIdx.x % kThreadsPerBlockRow) * kElementsPerThread;
  const uint32_t first_row = row_block * kBlock + threadIdx.x / kThreadsPerBlockRow;

  float values[kPasses][kElementsPerThread];
  float amax = 0.0f;
#pragma unroll
  for (uint32_t pass = 0; pass < kPasses; ++pass) {
    const uint32_t row = first_row + pass * kRowsPerPass;
    // A row beyond the matrix reads as zeros (past every column).
    load_elements<In, kVectorized>(p.x.data + p.x.offset(blockIdx.y, row, 0) * In::kBytes, col,
                                   row < p.rows ? kCols : 0, values[pass]);
    amax = max_nan(amax, thread_amax(values[pass]));
  }
  const Scale s = Format::scale_of(team_amax<kThreadsPerCta>(amax));
#pragma unroll
  for (uint32_t pass = 0; pass < kPasses; ++pass) {
    const uint32_t row = first_row + pass * kRowsPerPass;
    uint32_t codes[4];
    quantize<Format>(values[pass], s.inverse, codes);
    store_codes<kVectorized>(p.q.data + p.q.offset(blockIdx.y, row, 0), col, row < p.rows ? kCols : 0, codes);
  }
  if (threadIdx.x == 0) p.sf.data[p.sf.offset(blockIdx.y, row_block, col_block)] = s.scale;
}

// ---- scales from one layout into another ---------------------------------------------------------------

// Grid: (ceil(rows / 32), ceil(cols / 32), groups). A 32 x 32 tile goes through shared memory, so that both
// the reads (along the columns of a row-major source) and the writes (along the rows of an MN-major
// destination) are coalesced.
__device__ __forceinline__ void copy_scales(const ScaleCopyParams& p) {
  constexpr uint32_t kTile = kScaleTile;
  constexpr uint32_t kRowsPerPass = kThreadsPerCta / kTile;
  __shared__ float tile[kTile][kTile + 1];  // the extra column keeps a column's reads off one bank

  const uint32_t lane = threadIdx.x % kTile, warp = threadIdx.x / kTile;
  const uint32_t row0 = blockIdx.x * kTile, col0 = blockIdx.y * kTile;
#pragma unroll
  for (uint32_t i = warp; i < kTile; i += kRowsPerPass) {
    const uint32_t row = row0 + i, col = col0 + lane;
    if (row < p.rows && col < p.cols) tile[i][lane] = p.src.data[p.src.offset(blockIdx.z, row, col)];
  }
  __syncthreads();
#pragma unroll
  for (uint32_t i = warp; i < kTile; i += kRowsPerPass) {
    const uint32_t row = row0 + lane, col = col0 + i;
    if (row < p.rows && col < p.cols) p.dst.data[p.dst.offset(blockIdx.z, row, col)] = tile[lane][i];
  }
}

}  // namespace fgemm::quant
