// Quantization of BF16 or FP32 tensors to FP8 E4M3 with fine-grained scales, one scale per 1 x 128 block
// (per token) or per 128 x 128 block, and a copy of FP32 scales between two layouts. The arithmetic is the one
// documented in include/fgemm/quantize.hpp; each rounding step is written as its PTX instruction so that no
// compiler option (fast math, flush to zero, contraction) can change a bit of the result.
//
// Each thread owns 16 consecutive elements of a row: one 16-byte store of E4M3 codes, and one to four 16-byte
// loads of input. Eight threads cover the 128 columns of one block. The input is read once, into registers,
// and each code and scale is written once.
#pragma once

#include "fgemm/common.cuh"
#include "fgemm/quantize_params.cuh"

namespace fgemm::quant {

constexpr uint32_t kThreadsPerBlockRow = kBlock / kElementsPerThread;

// ---- arithmetic, one rounding per instruction ---------------------------------------------------------

__device__ __forceinline__ float mul_rn(float a, float b) {
  float r;
  asm("mul.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

__device__ __forceinline__ float reciprocal_rn(float a) {
  float r;
  asm("rcp.rn.f32 %0, %1;" : "=f"(r) : "f"(a));
  return r;
}

// The larger of a and b, or NaN when either is NaN (as PyTorch's amax and clamp; fmaxf would drop the NaN).
__device__ __forceinline__ float max_nan(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

__device__ __forceinline__ float abs_f32(float a) {
  float r;
  asm("abs.f32 %0, %1;" : "=f"(r) : "f"(a));
  return r;
}

__device__ __forceinline__ float float_from_bits(uint32_t bits) {
  float r;
  asm("mov.b32 %0, %1;" : "=f"(r) : "r"(bits));
  return r;
}

__device__ __forceinline__ uint32_t bits_of(float value) {
  uint32_t r;
  asm("mov.b32 %0, %1;" : "=r"(r) : "f"(value));
  return r;
}

// Four floats to E4M3 (round to nearest even, saturating to +-448, NaN stays NaN), `a` in bits 0-7.
__device__ __forceinline__ uint32_t pack_e4m3x4(float a, float b, float c, float d) {
  uint32_t packed;
  asm("{ .reg .b16 low, high;\n"
      "cvt.rn.satfinite.e4m3x2.f32 low, %2, %1;\n"
      "cvt.rn.satfinite.e4m3x2.f32 high, %4, %3;\n"
      "mov.b32 %0, {low, high}; }"
      : "=r"(packed)
      : "f"(a), "f"(b), "f"(c), "f"(d));
  return packed;
}

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

struct F32 {
  static constexpr uint32_t kBytes = 4;
  __device__ static float packed(const uint32_t* words, uint32_t i) { return float_from_bits(words[i]); }
  __device__ static float load_one(const void* pointer) { return float_from_bits(load_u32(pointer)); }
};

// ---- one thread's 16 elements -----------------------------------------------------------------------

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

// ---- the scale of a block ---------------------------------------------------------------------------

struct Scale {
  float scale;    // what is stored: x ~= q * scale
  float inverse;  // what x is multiplied by before the conversion
};

// 2^ceil(log2(s)) for a positive normal s, computed exactly on the bits: s itself when it is a power of
// two, else the next one. Infinity and NaN stay as they are.
__device__ __forceinline__ float power_of_two_at_least(float s) {
  const uint32_t bits = bits_of(s);
  const uint32_t exponent = bits >> 23;
  if (exponent == 0xFF || (bits & 0x7FFFFFu) == 0) return s;
  return float_from_bits((exponent + 1) << 23);
}

template <bool kUe8m0>
__device__ __forceinline__ Scale scale_of(float block_amax) {
  constexpr float kAmaxFloor = 1e-4f;
  constexpr float kE4m3Max = 448.0f;
  constexpr float kInverseE4m3Max = 1.0f / 448.0f;  // fl(1/448): the FP32 nearest
  const float amax = max_nan(block_amax, kAmaxFloor);
  const float scale = mul_rn(amax, kInverseE4m3Max);
  if (kUe8m0) {
    const float rounded = power_of_two_at_least(scale);
    return {rounded, reciprocal_rn(rounded)};
  }
  return {scale, mul_rn(reciprocal_rn(amax), kE4m3Max)};
}

__device__ __forceinline__ void quantize(const float (&values)[kElementsPerThread], float inverse,
                                         uint32_t (&codes)[4]) {
#pragma unroll
  for (uint32_t i = 0; i < 4; ++i)
    codes[i] = pack_e4m3x4(mul_rn(values[4 * i], inverse), mul_rn(values[4 * i + 1], inverse),
                           mul_rn(values[4 * i + 2], inverse), mul_rn(values[4 * i + 3], inverse));
}

// ---- per token: one warp per 4 blocks of one row --------------------------------------------------------

// Grid: (ceil(rows * kChunks / kWarpsPerCta), groups); each warp quantizes 512 columns ("a chunk") of one
// row, each group of 8 lanes one 1 x 128 block.
template <typename In, uint32_t kCols, bool kVectorized, bool kUe8m0>
__device__ __forceinline__ void per_token_cast(const QuantizeParams& p) {
  constexpr uint32_t kColsPerChunk = kColsPerWarp;
  constexpr uint32_t kChunks = ceil_div(kCols, kColsPerChunk);
  const uint32_t lane = threadIdx.x % 32;
  const uint64_t task = static_cast<uint64_t>(blockIdx.x) * kWarpsPerCta + threadIdx.x / 32;
  const uint64_t row = task / kChunks;
  if (row >= p.rows) return;  // the same for the whole warp, which then has no shuffle to join
  const uint32_t col = static_cast<uint32_t>(task % kChunks) * kColsPerChunk + lane * kElementsPerThread;

  float values[kElementsPerThread];
  load_elements<In, kVectorized>(p.x.data + p.x.offset(blockIdx.y, row, 0) * In::kBytes, col, kCols, values);
  const Scale s = scale_of<kUe8m0>(lanes_amax<kThreadsPerBlockRow>(thread_amax(values)));
  uint32_t codes[4];
  quantize(values, s.inverse, codes);
  store_codes<kVectorized>(p.q.data + p.q.offset(blockIdx.y, row, 0), col, kCols, codes);
  if (lane % kThreadsPerBlockRow == 0 && col < kCols) p.sf.data[p.sf.offset(blockIdx.y, row, col / kBlock)] = s.scale;
}

// ---- per 128 x 128 block: one CTA per block ------------------------------------------------------------

// Grid: (row blocks * column blocks, groups). The 256 threads hold the block in registers: thread t owns
// columns 16 * (t % 8) .. +16 of rows t / 8 + 32 * i, i = 0..3.
template <typename In, uint32_t kCols, bool kVectorized, bool kUe8m0>
__device__ __forceinline__ void per_block_cast(const QuantizeParams& p) {
  constexpr uint32_t kColBlocks = ceil_div(kCols, kBlock);
  constexpr uint32_t kRowsPerPass = kThreadsPerCta / kThreadsPerBlockRow;
  constexpr uint32_t kPasses = kBlock / kRowsPerPass;
  __shared__ float warp_amax[kWarpsPerCta];

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
  amax = lanes_amax<32>(amax);
  if (threadIdx.x % 32 == 0) warp_amax[threadIdx.x / 32] = amax;
  __syncthreads();
  amax = warp_amax[0];
#pragma unroll
  for (uint32_t w = 1; w < kWarpsPerCta; ++w) amax = max_nan(amax, warp_amax[w]);

  const Scale s = scale_of<kUe8m0>(amax);
#pragma unroll
  for (uint32_t pass = 0; pass < kPasses; ++pass) {
    const uint32_t row = first_row + pass * kRowsPerPass;
    uint32_t codes[4];
    quantize(values[pass], s.inverse, codes);
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
