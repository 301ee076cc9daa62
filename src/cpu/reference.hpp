// ARCHITECTURE.md (Semantics) written as plain loops, the yardstick the tests hold the fast path to. It shares only the
// E4M3 table and the BF16 rounding with the fast path. Slow: for tests.
#pragma once

#include "core/problem.hpp"

namespace fgemm::cpu {

// Computes a validated problem in host memory, all three layouts, one output element at a time.
void reference_gemm(const detail::GemmProblem& problem);

}  // namespace fgemm::cpu
