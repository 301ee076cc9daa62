// The GPU backend: runs a validated problem on an sm90 (Hopper) device with JIT-compiled kernels.
#pragma once

#include "core/problem.hpp"
#include "fgemm/fgemm.hpp"

namespace fgemm::cuda {

void gemm(const detail::GemmProblem& problem, Stream stream);

// Multiprocessors of the current device, or 0 where no GPU can be used.
int device_sm_count();

}  // namespace fgemm::cuda
