// The cache-blocked GEMM every instruction set shares; the instruction set only brings its KernelSet.
#pragma once

#include <vector>

#include "core/problem.hpp"
#include "cpu/kernel_set.hpp"
#include "cpu/row_blocks.hpp"

namespace fgemm::cpu {

// D = C + sum over K blocks of the scaled FP32 partial sums, for the rows of `blocks` (strides and the
// output type from `problem`). The rows are cut into chunks of up to 256 rows and the columns into tiles of
// kBlockN; a work unit, one task of the thread pool, is a chunk times a range of tiles. A unit walks K in
// spans of a few blocks: it decodes the chunk's span of A once, then for each tile decodes the span of B
// and runs the micro-kernels over each K block into the tile's FP32 sums. Last, C is added and D written.
void blocked_gemm(const detail::GemmProblem& problem, const std::vector<RowBlock>& blocks, const KernelSet& kernels);

}  // namespace fgemm::cpu
