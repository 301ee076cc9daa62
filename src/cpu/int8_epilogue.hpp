// The INT8 GEMM's last step: D from a work unit's sums, as the problem's recipe says (ARCHITECTURE.md,
// Semantics).
#pragma once

#include <cstdint>

#include "core/problem.hpp"
#include "cpu/int8_kernel_set.hpp"
#include "cpu/row_blocks.hpp"
#include "cpu/scratch_buffer.hpp"

namespace fgemm::cpu {

// The bias as FP32 values: the problem's own where they are FP32, else converted into `storage`; null where
// the problem has none.
const float* bias_in_fp32(const detail::GemmProblem& problem, ScratchBuffer& storage);

// Rows [first_row, first_row + rows) of a row block, columns [n0, n0 + cols), from the sums of row r (counted
// from first_row) at sums + r * sums_stride:
//   Scaling::None       INT32 sums     D = the sums
//   Scaling::RowColumn  INT32 sums     D = C + bias + (sfa[m] * sfb[n]) * float(the sum)
//   Scaling::Block      FP32 sums      D = C + bias + the sum (its K blocks promoted already)
// `bias` as bias_in_fp32 gives it; the kernel set's scale_row scales RowColumn's sums, and its output set's
// write rows round a 16-bit D (write_d).
void write_int8_d(const detail::GemmProblem& problem, const Int8KernelSet& kernels, const RowBlock& block,
                  const float* bias, std::int64_t first_row, std::int64_t rows, std::int64_t n0, std::int64_t cols,
                  const void* sums, std::int64_t sums_stride);

}  // namespace fgemm::cpu
