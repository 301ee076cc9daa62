// The CPU backend: the three layouts of DESIGN §1, with the exact arithmetic every backend shares.
#pragma once

#include "core/problem.hpp"

namespace fgemm::cpu {

// Runs a validated problem whose tensors are in host memory.
void gemm(const detail::GemmProblem& problem);

}  // namespace fgemm::cpu
