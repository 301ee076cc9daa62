// The CPU backend: every layout of ARCHITECTURE.md (Semantics), FP8 with the exact arithmetic every backend
// shares, BF16 and FP16 summed in FP32.
#pragma once

#include "core/problem.hpp"
#include "cpu/isa.hpp"
#include "cpu/kernel_set.hpp"

namespace fgemm::cpu {

// Runs a validated problem whose tensors are in host memory, with the kernels of selected_isa().
void gemm(const detail::GemmProblem& problem);

// The kernel set of an instruction set.
const KernelSet& kernels_for(Isa isa);
// The kernel set that runs problems of `input` (E4M3, BF16 or F16) on an instruction set: its own, but the
// AVX-512 FP32 set for FP16 where its own multiplies BF16.
const KernelSet& kernels_for(Isa isa, DType input);

}  // namespace fgemm::cpu
