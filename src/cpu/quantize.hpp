// The CPU backend of the quantization operations (include/fgemm/quantize.hpp): the same arithmetic as the
// GPU kernels, in plain FP32 C++, rows shared among the thread pool.
#pragma once

#include <cstdint>

#include "core/quantize_problem.hpp"

namespace fgemm::cpu {

// Runs a validated quantization whose tensors are in host memory.
void quantize(const detail::QuantizeProblem& problem);

void copy_scales(const detail::ScaleCopyProblem& problem);

struct E4m3Scale {
  float scale;    // what is stored: x ~= q * scale
  float inverse;  // what x is multiplied by before the conversion
};

// The scale of a block whose largest magnitude is `block_amax` (NaN where the block holds a NaN), plain or, with
// use_ue8m0, a power of two: the arithmetic of include/fgemm/quantize.hpp.
E4m3Scale e4m3_scale_of(float block_amax, bool use_ue8m0);

// The E4M3 code of `value`: the nearest E4M3 value (ties to even), saturated to +-448; a NaN gives NaN
// (0x7F with the NaN's sign).
std::uint8_t e4m3_from_float(float value);

}  // namespace fgemm::cpu
