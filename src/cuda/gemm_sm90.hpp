// The GPU backend: runs a validated problem on an sm90 (Hopper) device with JIT-compiled kernels.
#pragma once

#include "core/problem.hpp"
#include "fgemm/fgemm.hpp"

namespace fgemm::cuda {

void gemm(const detail::GemmProblem& problem, Stream stream);

// Multiprocessors of the current device, or 0 where no GPU can be used.
int device_sm_count();

// For tuning and tests: run every later GEMM with this tile shape and cluster shape (cluster 0 x 0: the
// heuristics pick it; the stages and grid are always theirs), or with the heuristics' choice again when
// block_m is 0. A later GEMM throws fgemm::Error(InvalidValue) if the kernel cannot run the shape there.
void force_config(int block_m, int block_n, int cluster_m, int cluster_n);

}  // namespace fgemm::cuda
