// The last step of every path: D = the FP32 sums (+ C), rounded to D's type.
#pragma once

#include "core/problem.hpp"
#include "cpu/kernel_set.hpp"
#include "cpu/row_blocks.hpp"

namespace fgemm::cpu {

// Rows [first_row, first_row + rows) of a row block, columns [n0, n0 + cols); the sums of row r (counted
// from first_row) start at sums + r * sums_stride. A BF16 D is written by the kernels' write_bf16_row, an
// FP16 one by their write_f16_row. C is FP32 or D's 16-bit type, and may be D itself (each row of C is read
// before it is written).
void write_d(const detail::GemmProblem& problem, const KernelSet& kernels, const RowBlock& block,
             std::int64_t first_row, std::int64_t rows, std::int64_t n0, std::int64_t cols, const float* sums,
             std::int64_t sums_stride);

}  // namespace fgemm::cpu
