// The GPU backend: runs a validated problem on an sm90 (Hopper) device with JIT-compiled kernels.
#pragma once

#include "core/problem.hpp"
#include "fgemm/fgemm.hpp"

namespace fgemm::cuda {

void gemm(const detail::GemmProblem& problem, Stream stream);

// Multiprocessors of the current device, or 0 where no GPU can be used.
int device_sm_count();

// For tuning and tests: run every later GEMM with this tile shape (the heuristics still pick the stages
// and the grid), or with the heuristics' choice again when both are 0. A later GEMM throws
// fgemm::Error(InvalidValue) if the kernel does not support the shape for its problem.
void force_block_shape(int block_m, int block_n);

}  // namespace fgemm::cuda
