// The GPU side of the cast-transpose quantizers: the kernel of kernels/fgemm/cast_transpose.cuh, specialised per
// input type, K and options, compiled on first use and launched on the caller's stream, once per
// quant::kMaxBandsPerLaunch experts with rows.
#pragma once

#include <cstdint>
#include <string>

#include "core/quantize_problem.hpp"
#include "fgemm/fgemm.hpp"
#include "jit/kernel_spec.hpp"

namespace fgemm::cuda {

void cast_transpose(const detail::CastTransposeProblem& problem, Stream stream);

// What a cast-transpose kernel is specialised on.
struct CastTransposeKernel {
  DType input = DType::BF16;
  std::int64_t cols = 0;  // K
  bool use_ue8m0 = false;
  // 16-byte loads of x and stores of the row-wise codes, as QuantizeKernel's.
  bool vectorized = true;
  // 16-byte stores of the transposed codes: the codes 16-byte aligned, and M, every band's offset and every
  // band's row stride multiples of 16. Otherwise one code at a time.
  bool transposed_vectorized = true;
  bool block_scaled = false;  // one scale per 128 x 128 block (per_block_cast_transpose_to_fp8)

  // Unique per specialisation, e.g. "fgemm_cast_transpose_bfloat16_k7168_vec_tvec" ("..._block" for block_scaled).
  std::string name() const;
};

jit::KernelSpec cast_transpose_kernel_spec(const CastTransposeKernel& kernel);

}  // namespace fgemm::cuda
