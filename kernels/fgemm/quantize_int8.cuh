// INT8 codes for the quantization kernels (the arithmetic of include/fgemm/quantize_int8.hpp): symmetric
// codes from -127 to 127, a block's scale its largest magnitude over 127.
#pragma once

#include "fgemm/quantize_math.cuh"

namespace fgemm::quant {

// The integer nearest `scaled` (ties to even) as a two's-complement byte in bits 0-7. A NaN gives 0, cvt's rule
// for float-to-integer conversions. The quantizers' scaled values lie within +-127.5, so no clamping is needed.
__device__ __forceinline__ uint32_t int8_code(float scaled) {
  int32_t code;
  asm("cvt.rni.s32.f32 %0, %1;" : "=r"(code) : "f"(scaled));
  return static_cast<uint32_t>(code) & 0xFFu;
}

// The code format of the quantization kernels' Format parameter (quantize.cuh).
struct Int8 {
  static constexpr float kMaxCode = 127.0f;
  static constexpr float kAmaxFloor = 1e-10f;

  __device__ __forceinline__ static Scale scale_of(float block_amax) { return symmetric_scale<Int8>(block_amax); }

  __device__ __forceinline__ static uint32_t pack4(float a, float b, float c, float d) {
    return int8_code(a) | int8_code(b) << 8 | int8_code(c) << 16 | int8_code(d) << 24;
  }
};

}  // namespace fgemm::quant
