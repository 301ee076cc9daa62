// The cache-blocked INT8 GEMM every instruction set shares; the instruction set only brings its Int8KernelSet.
#pragma once

#include <vector>

#include "core/problem.hpp"
#include "cpu/int8_kernel_set.hpp"
#include "cpu/int8_packed_a.hpp"
#include "cpu/row_blocks.hpp"

namespace fgemm::cpu {

// D for the rows of `blocks` (strides, recipe and output type from `problem`), A packed in `packed_a`, the bias
// as bias_in_fp32 gives it. A work unit, one task of the thread pool, is a strip of columns of D times the rows
// of one block, or a part of them. A unit walks K in spans of a few blocks: it packs the strip's span of B
// once and runs the micro-kernels over it for all its rows, chunk by chunk: the exact INT32 sums over the span
// added to the strip's sums (Scaling::None and RowColumn, whose sums are INT32 over all of K), or each K
// block's sums promoted into the strip's FP32 sums with its scales (Scaling::Block). Last, the epilogue
// writes D.
void int8_blocked_gemm(const detail::GemmProblem& problem, const std::vector<RowBlock>& blocks,
                       const Int8PackedA& packed_a, const Int8KernelSet& kernels, const float* bias);

}  // namespace fgemm::cpu
