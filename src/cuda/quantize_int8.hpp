// The GPU side of the INT8 quantization operations: the kernels of kernels/fgemm/quantize.cuh with INT8 codes
// (quantize_int8.cuh), specialised per scaling, input type, K and group size, compiled on first use and launched
// on the caller's stream.
#pragma once

#include <cstdint>
#include <string>

#include "core/quantize_int8_problem.hpp"
#include "fgemm/fgemm.hpp"
#include "jit/kernel_spec.hpp"

namespace fgemm::cuda {

void quantize_int8(const detail::Int8QuantizeProblem& problem, Stream stream);

// What an INT8 quantization kernel is specialised on.
struct Int8QuantizeKernel {
  detail::Int8Scaling scaling = detail::Int8Scaling::Row;
  DType input = DType::BF16;
  std::int64_t cols = 0;          // K
  std::int64_t group_cols = 128;  // Group: the columns of one block; unused otherwise
  // 16-byte loads and stores, as QuantizeKernel's (cuda/quantize.hpp).
  bool vectorized = true;

  std::string name() const;  // unique per specialisation, e.g. "fgemm_int8_per_row_cast_bfloat16_k7168_vec"
};

jit::KernelSpec quantize_int8_kernel_spec(const Int8QuantizeKernel& kernel);

}  // namespace fgemm::cuda
