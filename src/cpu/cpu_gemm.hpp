// The CPU backend: the three layouts of ARCHITECTURE.md (Semantics), with the exact arithmetic every backend shares.
#pragma once

#include "core/problem.hpp"
#include "cpu/isa.hpp"
#include "cpu/kernel_set.hpp"

namespace fgemm::cpu {

// Runs a validated problem whose tensors are in host memory, with the kernels of selected_isa().
void gemm(const detail::GemmProblem& problem);

// The kernel set of an instruction set.
const KernelSet& kernels_for(Isa isa);

}  // namespace fgemm::cpu
