// FP8 E4M3 codes for the quantization kernels (the arithmetic of include/fgemm/quantize.hpp): a block's scale,
// optionally rounded up to a power of two (UE8M0), and the conversion of scaled values to codes.
#pragma once

#include "fgemm/quantize_math.cuh"

namespace fgemm::quant {

// Four floats to E4M3 (round to nearest even, saturating to +-448, NaN stays NaN), `a` in bits 0-7.
__device__ __forceinline__ uint32_t pack_e4m3x4(float a, float b, float c, float d) {
  uint32_t packed;
  asm("{ .reg .b16 low, high;\n"
      "cvt.rn.satfinite.e4m3x2.f32 low, %2, %1;\n"
      "cvt.rn.satfinite.e4m3x2.f32 high, %4, %3;\n"
      "mov.b32 %0, {low, high}; }"
      : "=r"(packed)
      : "f"(a), "f"(b), "f"(c), "f"(d));
  return packed;
}

// 2^ceil(log2(s)) for a positive normal s, computed exactly on the bits: s itself when it is a power of
// two, else the next one. Infinity and NaN stay as they are.
__device__ __forceinline__ float power_of_two_at_least(float s) {
  const uint32_t bits = bits_of(s);
  const uint32_t exponent = bits >> 23;
  if (exponent == 0xFF || (bits & 0x7FFFFFu) == 0) return s;
  return float_from_bits((exponent + 1) << 23);
}

// The code format of the quantization kernels' Format parameter (quantize.cuh).
template <bool kUe8m0>
struct E4m3 {
  static constexpr float kMaxCode = 448.0f;
  static constexpr float kAmaxFloor = 1e-4f;

  __device__ __forceinline__ static Scale scale_of(float block_amax) {
    const Scale plain = symmetric_scale<E4m3>(block_amax);
    if (!kUe8m0) return plain;
    const float rounded = power_of_two_at_least(plain.scale);
    return {rounded, reciprocal_rn(rounded)};
  }

  __device__ __forceinline__ static uint32_t pack4(float a, float b, float c, float d) {
    return pack_e4m3x4(a, b, c, d);
  }
};

}  // namespace fgemm::quant
