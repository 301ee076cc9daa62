// The CPU backend of the cast-transpose quantizers (include/fgemm/quantize.hpp): the arithmetic of the GPU kernel
// (kernels/fgemm/cast_transpose.cuh) in plain FP32 C++, 128 x 128 tiles shared among the thread pool.
#pragma once

#include "core/quantize_problem.hpp"

namespace fgemm::cpu {

// Runs a validated cast-transpose whose tensors are in host memory.
void cast_transpose(const detail::CastTransposeProblem& problem);

}  // namespace fgemm::cpu
