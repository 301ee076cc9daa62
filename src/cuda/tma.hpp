// Tensor maps (TMA descriptors) of the GEMM operands, encoded by the driver on the host.
#pragma once

#include <cstdint>

#include "driver/cuda_types.hpp"

namespace fgemm::cuda {

// A row-major matrix `rows` x `cols` of `element_bytes`-byte elements with `row_stride` elements between
// rows, read or written in boxes of `box_rows` x `box_cols`. `swizzle_bytes` is 0, 32, 64 or 128: the
// shared-memory layout the kernel expects for the box. Elements outside the matrix read as zero and are
// never written. A stack of `groups` such matrices, `group_stride` elements apart, makes a 3-D map whose
// boxes hold one matrix's elements; groups == 0 makes a 2-D map.
struct MatrixBox {
  const void* data;
  std::uint64_t rows;
  std::uint64_t cols;
  std::uint64_t row_stride;
  int element_bytes;
  std::uint32_t box_rows;
  std::uint32_t box_cols;
  int swizzle_bytes;
  std::uint64_t groups = 0;
  std::uint64_t group_stride = 0;
};

driver::CUtensorMap make_tensor_map(const MatrixBox& matrix, const char* what);

}  // namespace fgemm::cuda
