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
// Compared bytewise to find a remembered map: keep it free of padding.
struct MatrixBox {
  const void* data;
  std::uint64_t rows;
  std::uint64_t cols;
  std::uint64_t row_stride;
  std::int32_t element_bytes;
  std::uint32_t box_rows;
  std::uint32_t box_cols;
  std::int32_t swizzle_bytes;
  std::uint64_t groups = 0;
  std::uint64_t group_stride = 0;
};
static_assert(sizeof(MatrixBox) == 8 + 3 * 8 + 4 * 4 + 2 * 8, "MatrixBox has no padding");

driver::CUtensorMap make_tensor_map(const MatrixBox& matrix, const char* what);

}  // namespace fgemm::cuda
