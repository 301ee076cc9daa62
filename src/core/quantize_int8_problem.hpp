// A validated INT8 quantization call (include/fgemm/quantize_int8.hpp), reduced to what every backend needs.
// Built only by quantize_int8_validate.cpp, so a backend may trust every field.
#pragma once

#include <cstdint>

#include "core/quantize_problem.hpp"
#include "fgemm/common.cuh"
#include "fgemm/tensor.hpp"

namespace fgemm::detail {

// The INT8 quantizers; the names of their operations and arguments come with them (names_of).
enum class Int8Quantizer : std::uint8_t { PerToken, PerChannel, PerTokenGroup, PerBlock };

// The blocks that share one scale.
enum class Int8Scaling : std::uint8_t {
  Row,    // a whole row: per token of x [M, K], per output channel of w [N, K]
  Group,  // 1 x group_cols: per token, per group of columns
  Block,  // 128 x 128
};

struct Int8QuantizerNames {
  const char* op;     // e.g. "per_token_cast_to_int8"
  const char* input;  // "x" or "w"
  const char* codes;  // "x_int8" or "w_int8"
};

inline Int8QuantizerNames names_of(Int8Quantizer quantizer) {
  switch (quantizer) {
    case Int8Quantizer::PerToken: return {"per_token_cast_to_int8", "x", "x_int8"};
    case Int8Quantizer::PerChannel: return {"per_channel_cast_to_int8", "w", "w_int8"};
    case Int8Quantizer::PerTokenGroup: return {"per_token_group_cast_to_int8", "x", "x_int8"};
    case Int8Quantizer::PerBlock: break;
  }
  return {"per_block_cast_to_int8", "w", "w_int8"};
}

inline Int8Scaling scaling_of(Int8Quantizer quantizer) {
  switch (quantizer) {
    case Int8Quantizer::PerToken:
    case Int8Quantizer::PerChannel: return Int8Scaling::Row;
    case Int8Quantizer::PerTokenGroup: return Int8Scaling::Group;
    case Int8Quantizer::PerBlock: break;
  }
  return Int8Scaling::Block;
}

struct Int8QuantizeProblem {
  Int8Quantizer quantizer = Int8Quantizer::PerToken;
  Device device{};
  DType input = DType::BF16;  // BF16, F16 or F32

  std::int64_t groups = 1;
  std::int64_t rows = 0;          // M or N, per group
  std::int64_t cols = 0;          // K
  std::int64_t group_cols = 128;  // Group: the columns of one block (32, 64 or 128)

  StridedStack<const void> x;   // column stride 1
  StridedStack<std::int8_t> q;  // the shape of x, column stride 1
  // Element (g, r, c): the scale of the block at row block r (rows 128 r .. 128 r + 127 for Block, row r
  // otherwise) and column block c (columns c * block_cols() ..); for Row, c is 0 and col_stride 0.
  StridedStack<float> sf;

  Int8Scaling scaling() const { return scaling_of(quantizer); }
  std::int64_t block_rows() const { return scaling() == Int8Scaling::Block ? 128 : 1; }
  std::int64_t block_cols() const {
    switch (scaling()) {
      case Int8Scaling::Row: return cols;
      case Int8Scaling::Group: return group_cols;
      case Int8Scaling::Block: break;
    }
    return 128;
  }
  std::int64_t scale_rows() const { return ceil_div(rows, block_rows()); }
  std::int64_t scale_cols() const { return scaling() == Int8Scaling::Row ? 1 : ceil_div(cols, block_cols()); }
  // Nothing to write: no scale at all. (A row with no columns still has a scale.)
  bool empty() const { return groups == 0 || scale_rows() == 0 || scale_cols() == 0; }
};

}  // namespace fgemm::detail
