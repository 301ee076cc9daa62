// The GPU side of the quantization operations: the kernels of kernels/fgemm/quantize.cuh, specialised per
// operation, input type, K and options, compiled on first use and launched on the caller's stream.
#pragma once

#include <cstdint>
#include <string>

#include "core/quantize_problem.hpp"
#include "fgemm/fgemm.hpp"
#include "jit/kernel_spec.hpp"

namespace fgemm::cuda {

void quantize(const detail::QuantizeProblem& problem, Stream stream);

void copy_scales(const detail::ScaleCopyProblem& problem, Stream stream);

// What a quantization kernel is specialised on.
struct QuantizeKernel {
  detail::ScaleBlock block = detail::ScaleBlock::Token;
  DType input = DType::BF16;
  std::int64_t cols = 0;  // K
  bool use_ue8m0 = false;
  // 16-byte loads and stores: every thread's 16 elements start 16-byte aligned in x and in the codes, and
  // K is a multiple of 16. Otherwise one element at a time.
  bool vectorized = true;

  std::string name() const;  // unique per specialisation, e.g. "fgemm_per_token_cast_bfloat16_k7168_vec"
};

jit::KernelSpec quantize_kernel_spec(const QuantizeKernel& kernel);

jit::KernelSpec copy_scales_kernel_spec();

}  // namespace fgemm::cuda
