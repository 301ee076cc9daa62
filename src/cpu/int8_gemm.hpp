// The CPU backend's INT8 GEMM: every recipe of ARCHITECTURE.md (Semantics) in the normal, contiguous and
// masked layouts, the products of int8 values summed exactly in INT32.
#pragma once

#include "core/problem.hpp"
#include "cpu/int8_kernel_set.hpp"
#include "cpu/isa.hpp"

namespace fgemm::cpu {

// Runs a validated INT8 problem whose tensors are in host memory, with the kernel set that int8_isa_for maps
// selected_isa() to.
void int8_gemm(const detail::GemmProblem& problem);

// The same with a given kernel set, for which cpu_supports must have returned true (for AMX, that call asks
// Linux for the tile state).
void int8_gemm(const detail::GemmProblem& problem, Int8Isa isa);

// The INT8 kernel set that runs for the instruction set FGEMM_CPU_ISA names (or the best one).
Int8Isa int8_isa_for(Isa isa);

const Int8KernelSet& int8_kernels_for(Int8Isa isa);

}  // namespace fgemm::cpu
