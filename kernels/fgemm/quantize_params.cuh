// The quantization kernels' parameter blocks, passed by value, and their launch geometry: declared once, for
// NVRTC and for the host that fills and launches them (src/cuda/quantize.cpp, src/cuda/quantize_int8.cpp,
// src/cuda/cast_transpose.cpp).
#pragma once

#include "fgemm/common.cuh"

namespace fgemm::quant {

constexpr uint32_t kBlock = 128;             // the side of a scaling block
constexpr uint32_t kElementsPerThread = 16;  // a slice: one 16-byte vector of codes
constexpr uint32_t kThreadsPerCta = 256;
constexpr uint32_t kWarpsPerCta = kThreadsPerCta / 32;
constexpr uint32_t kColsPerWarp = 32 * kElementsPerThread;  // per token: a warp's pass over a row
constexpr uint32_t kScaleTile = 32;                         // copy_scales: a 32 x 32 tile per CTA

// Per row (one scale per row): the slices of 16 elements a thread aims to hold, and the most it holds. Two
// slices keep a thread under 50 registers, so that five CTAs fit an SM with 64 bytes of 16-bit input in flight
// per thread; rows longer than a CTA's two slices take more slices per thread, up to 8 (128 FP32 values, half of
// what a thread of a 256-thread CTA may keep in registers).
constexpr uint32_t kRowSlicesAimed = 2;
constexpr uint32_t kRowSlicesHeld = 8;

// The threads that quantize one row of `cols` columns: the fewest, a power of two up to a CTA, that hold it in
// kRowSlicesAimed slices each.
__host__ __device__ constexpr uint32_t row_team_threads(uint32_t cols) {
  uint32_t threads = 1;
  while (threads < kThreadsPerCta && threads * kRowSlicesAimed * kElementsPerThread < cols) threads *= 2;
  return threads;
}

// The slices each thread of a row's team owns (at least one, so that an empty row still has its scale).
__host__ __device__ constexpr uint32_t row_slices(uint32_t cols) {
  const uint32_t slices = ceil_div(ceil_div(cols, kElementsPerThread), row_team_threads(cols));
  return slices > 0 ? slices : 1;
}

// The longest row a team keeps in registers between its maximum and its codes.
constexpr uint32_t kRowHeldCols = kThreadsPerCta * kRowSlicesHeld * kElementsPerThread;

// A matrix or a stack of matrices: element (g, r, c) lies at data + offset(g, r, c), strides in elements.
template <typename T>
struct Stack {
  T* data;
  int64_t group_stride;
  int64_t row_stride;
  int64_t col_stride;

  __device__ int64_t offset(uint32_t g, uint64_t r, uint32_t c) const {
    return g * group_stride + static_cast<int64_t>(r) * row_stride + c * col_stride;
  }
};

struct QuantizeParams {
  Stack<const uint8_t> x;  // BF16, FP16 or FP32 elements, addressed as bytes; column stride 1
  Stack<uint8_t> q;        // codes, one byte each; column stride 1
  Stack<float> sf;         // one per row or per 128 rows, per block of columns (or per row alone: column 0)
  uint32_t rows;
};

// cast_transpose (cast_transpose.cuh): a band of the outputs' rows, [first_row, first_row + rows), whose first
// x_rows rows are x's from x_first_row on and the rest zeros (an expert's rows padded to a multiple of kBlock);
// element (c, r) of its transpose lies at qt + offset + c * row_stride + (r - first_row). The ungrouped operation
// has one band, the grouped one a band per expert with rows; each band starts at a multiple of kBlock rows, and
// every band but the last ends at one.
struct TransposedBand {
  uint32_t first_row;
  uint32_t rows;
  int64_t offset;
  int64_t row_stride;
  uint32_t x_first_row;
  uint32_t x_rows;
};

constexpr uint32_t kMaxBandsPerLaunch = 32;

// A stack of weights (per_block_cast_transpose_to_fp8 of [G, N, K]) is one launch, grid.y its matrices, each
// with the same band.
struct CastTransposeParams {
  Stack<const uint8_t> x;    // [rows, K]: BF16 or FP32 elements, addressed as bytes; column stride 1
  Stack<uint8_t> q;          // [rows, K] codes; column stride 1
  Stack<float> sf;           // [rows, ceil(K / 128)]
  Stack<float> sft;          // [K, ceil(rows / 128)]: the scales of the transpose
  uint8_t* qt;               // the transposed codes, addressed through the bands
  int64_t qt_group_stride;   // matrix g's transposed codes start at qt + g * qt_group_stride
  uint32_t rows;             // the outputs' rows
  uint32_t first_row_block;  // the launch's first block of kBlock rows
  uint32_t bands;            // 1 .. kMaxBandsPerLaunch: those that the launch's row blocks fall in, in order
  TransposedBand band[kMaxBandsPerLaunch];
};

struct ScaleCopyParams {
  Stack<const float> src;
  Stack<float> dst;
  uint32_t rows;
  uint32_t cols;
};

}  // namespace fgemm::quant
