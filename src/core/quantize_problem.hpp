// A validated quantization call, reduced to what every backend needs. Built only by quantize_validate.cpp,
// so a backend may trust every field.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fgemm/tensor.hpp"

namespace fgemm::detail {

// A matrix, or a stack of matrices: element (g, r, c) lies `offset(g, r, c)` elements after `data`.
template <typename T>
struct StridedStack {
  T* data = nullptr;
  std::int64_t group_stride = 0;  // 0 for a single matrix
  std::int64_t row_stride = 0;
  std::int64_t col_stride = 1;

  std::int64_t offset(std::int64_t g, std::int64_t r, std::int64_t c) const {
    return g * group_stride + r * row_stride + c * col_stride;
  }
};

// The shape of the blocks that share one scale.
enum class ScaleBlock : std::uint8_t {
  Token,  // 1 x 128: per row, per 128 columns
  Block,  // 128 x 128
};

struct QuantizeProblem {
  ScaleBlock block = ScaleBlock::Token;
  Device device{};
  DType input = DType::BF16;  // BF16 or F32
  bool use_ue8m0 = false;

  std::int64_t groups = 1;
  std::int64_t rows = 0;  // M or N, per group
  std::int64_t cols = 0;  // K

  StridedStack<const void> x;    // column stride 1
  StridedStack<std::uint8_t> q;  // E4M3 codes, the shape of x, column stride 1
  // Element (g, r, c): the scale of row r (Token) or of rows 128 r .. 128 r + 127 (Block), and of columns
  // 128 c .. 128 c + 127.
  StridedStack<float> sf;

  std::int64_t col_blocks() const { return (cols + 127) / 128; }
  std::int64_t scale_rows() const { return block == ScaleBlock::Token ? rows : (rows + 127) / 128; }
  bool empty() const { return groups == 0 || rows == 0 || cols == 0; }
};

// A band of the outputs' rows, [first_row, first_row + rows), and where it comes from and goes: its first x_rows
// rows are x's rows from x_first_row on, the rest zeros (an expert's rows padded to a multiple of 128); element
// (c, r) of its transpose lies `offset + c * row_stride + (r - first_row)` elements after the transposed codes'
// start.
struct TransposedBand {
  std::int64_t first_row = 0;
  std::int64_t rows = 0;
  std::int64_t offset = 0;
  std::int64_t row_stride = 0;
  std::int64_t x_first_row = 0;
  std::int64_t x_rows = 0;
};

// A validated cast_transpose_to_fp8 or grouped_cast_transpose_to_fp8: x [rows, cols] quantized per 1 x 128 block
// of its rows into q and sf (as per_token_cast_to_fp8), and its transpose per 1 x 128 block of the transpose's
// rows into qt and sft (as per_token_cast_to_fp8 of x's transpose); the grouped operation's x may be fewer rows,
// each expert's padded with zero rows to a multiple of 128 in the outputs (the bands' x_rows). Or
// per_block_cast_transpose_to_fp8 (block Block): x quantized per 128 x 128 block into q and sf (as
// per_block_cast_to_fp8), the same codes transposed into qt and the scales transposed into sft.
struct CastTransposeProblem {
  ScaleBlock block = ScaleBlock::Token;
  bool grouped = false;  // grouped_cast_transpose_to_fp8
  Device device{};
  DType input = DType::BF16;  // BF16 or F32
  bool use_ue8m0 = false;
  // Block: the matrices of a stack [groups, rows, cols] (experts' weights), each quantized and transposed on its
  // own, with the same bands; every other operation has one.
  std::int64_t groups = 1;
  std::int64_t rows = 0;  // the outputs' rows: M, or the experts' rows together, each padded to a multiple of 128
  std::int64_t cols = 0;  // K, or H

  StridedStack<const void> x;    // column stride 1
  StridedStack<std::uint8_t> q;  // E4M3 codes, the shape of x, column stride 1
  StridedStack<float> sf;        // [rows, ceil(cols/128)]; Block: [groups, ceil(rows/128), ceil(cols/128)]
  std::uint8_t* qt = nullptr;    // the transposed codes, placed by the bands
  std::int64_t qt_group_stride = 0;  // where a stack's matrix g's transposed codes start: g * qt_group_stride
  // In order of rows, together covering them all: one for the ungrouped operation (xt_fp8 [cols, rows]), one per
  // expert with rows for the grouped one (each a [cols, its rows] block of the flat output, at a multiple of 128
  // rows).
  std::vector<TransposedBand> bands;
  // Whether some band's outputs hold zero rows that x does not (the grouped operation with counts that are not
  // multiples of 128).
  bool pads_rows() const {
    return std::any_of(bands.begin(), bands.end(), [](const TransposedBand& b) { return b.x_rows != b.rows; });
  }
  // [cols, ceil(rows/128)]: element (c, b) scales qt's row c, x's rows 128 b .. +127. Block: [groups,
  // ceil(cols/128), ceil(rows/128)], sf transposed.
  StridedStack<float> sft;

  std::int64_t row_blocks() const { return (rows + 127) / 128; }
  std::int64_t col_blocks() const { return (cols + 127) / 128; }
  bool empty() const { return groups == 0 || rows == 0 || cols == 0; }
};

// A copy of FP32 scales [groups, rows, cols] from one layout into another.
struct ScaleCopyProblem {
  Device device{};
  std::int64_t groups = 1;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  StridedStack<const float> src;
  StridedStack<float> dst;

  bool empty() const { return groups == 0 || rows == 0 || cols == 0; }
};

}  // namespace fgemm::detail
