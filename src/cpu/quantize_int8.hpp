// The CPU backend of the INT8 quantization operations (include/fgemm/quantize_int8.hpp): the same arithmetic as
// the GPU kernels, in plain FP32 C++, the blocks' rows shared among the thread pool.
#pragma once

#include "core/quantize_int8_problem.hpp"

namespace fgemm::cpu {

// Runs a validated INT8 quantization whose tensors are in host memory.
void quantize_int8(const detail::Int8QuantizeProblem& problem);

}  // namespace fgemm::cpu
