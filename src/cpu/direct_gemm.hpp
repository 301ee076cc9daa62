// The path for row blocks of few rows (decoding: one token, or a few per expert), where the blocked GEMM
// would spend its time packing B for rows that use it once.
#pragma once

#include <vector>

#include "core/problem.hpp"
#include "cpu/kernel_set.hpp"
#include "cpu/operand_packing.hpp"
#include "cpu/packed_a.hpp"
#include "cpu/row_blocks.hpp"

namespace fgemm::cpu {

// D for the rows of `blocks` (each of at most kernels.max_direct_rows rows), A packed in `packed_a`. Work units are
// ranges of a few columns of D: each decodes its rows of B (no transposing, unlike the packing for
// micro-kernels) into a buffer that stays in L1, and a dot kernel multiplies each decoded row by the rows of
// A, scaling once per K block. Every row of B is decoded once.
void direct_gemm(const detail::GemmProblem& problem, const std::vector<RowBlock>& blocks, const PackedA& packed_a,
                 const KernelSet& kernels, const OperandPacking& operands);

}  // namespace fgemm::cpu
