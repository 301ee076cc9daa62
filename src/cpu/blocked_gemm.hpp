// The cache-blocked GEMM every instruction set shares; the instruction set only brings its KernelSet.
#pragma once

#include <vector>

#include "core/problem.hpp"
#include "cpu/kernel_set.hpp"
#include "cpu/operand_packing.hpp"
#include "cpu/packed_a.hpp"
#include "cpu/row_blocks.hpp"

namespace fgemm::cpu {

// D = C + sum over K blocks of the scaled FP32 partial sums, for the rows of `blocks` (strides and the
// output type from `problem`), A packed in `packed_a`. A work unit, one task of the thread pool, is a strip
// of 64 columns of D times the rows of one block, or a part of them (up to 512 rows, and fewer where there
// are too few strips to keep every thread busy). A unit walks K in spans of a few blocks: it packs the
// strip's span of B once (decoding and transposing it for the micro-kernels) and runs the micro-kernels
// over each K block for all its rows, into the strip's FP32 sums. Last, C is added and D written. So B is
// decoded once per call for up to 512 rows, and A once per call.
void blocked_gemm(const detail::GemmProblem& problem, const std::vector<RowBlock>& blocks, const PackedA& packed_a,
                  const KernelSet& kernels, const OperandPacking& operands);

}  // namespace fgemm::cpu
