// ARCHITECTURE.md (Semantics) written as plain loops, the yardstick the tests hold the fast path to. It shares only the
// E4M3 table, the 16-bit conversions and the group arrays' checks with the fast path. Slow: for tests.
#pragma once

#include "core/problem.hpp"

namespace fgemm::cpu {

// Computes a validated problem in host memory, every layout and input type, one output element at a time: FP8
// as the recipe says (FP32 sums of K blocks), BF16 and FP16 with FP64 sums (then C, then one rounding to D),
// INT8 with exact sums: INT32 D as INT32 arithmetic leaves them, else the recipe's scales, C and bias in FP64
// and one rounding to D.
void reference_gemm(const detail::GemmProblem& problem);

}  // namespace fgemm::cpu
