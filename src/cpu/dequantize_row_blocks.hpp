// The FP8 1D1D recipe on the CPU (Scaling::RowBlocks: A and B both scaled per 1 x 128 block along K).
//
// Both operands are dequantized once, element by element, to BF16: the E4M3 value times its block's scale,
// rounded once to the nearest BF16. The problem then runs as a BF16 GEMM with FP32 sums, whose CPU kernels
// exist for every instruction set. The rounding is the only departure from the GPU's per-block promotion:
// at most 2^-8 of each element (BF16 keeps 8 significant bits), which leaves calc_diff against the FP64
// reference near 1e-5.
#pragma once

#include "core/problem.hpp"
#include "cpu/scratch_buffer.hpp"

namespace fgemm::cpu {

// The BF16 problem of a RowBlocks problem (normal or k-grouped), its operands dequantized into `a16` and `b16`
// as K-major matrices [M, K] and [N, K] (k-grouped: the experts' blocks side by side along K).
detail::GemmProblem dequantize_row_blocks(const detail::GemmProblem& p, ScratchBuffer& a16, ScratchBuffer& b16);

}  // namespace fgemm::cpu
