// The quantizers' FP32 arithmetic, each rounding step written as its PTX instruction so that no compiler option
// (fast math, flush to zero, contraction) can change a bit of the result, and the scale of a block that every
// symmetric code format shares (include/fgemm/quantize.hpp, include/fgemm/quantize_int8.hpp).
#pragma once

#include "fgemm/common.cuh"

namespace fgemm::quant {

__device__ __forceinline__ float mul_rn(float a, float b) {
  float r;
  asm("mul.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

__device__ __forceinline__ float reciprocal_rn(float a) {
  float r;
  asm("rcp.rn.f32 %0, %1;" : "=f"(r) : "f"(a));
  return r;
}

// The larger of a and b, or NaN when either is NaN (as PyTorch's amax and clamp; fmaxf would drop the NaN).
__device__ __forceinline__ float max_nan(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

__device__ __forceinline__ float abs_f32(float a) {
  float r;
  asm("abs.f32 %0, %1;" : "=f"(r) : "f"(a));
  return r;
}

__device__ __forceinline__ float float_from_bits(uint32_t bits) {
  float r;
  asm("mov.b32 %0, %1;" : "=f"(r) : "r"(bits));
  return r;
}

__device__ __forceinline__ uint32_t bits_of(float value) {
  uint32_t r;
  asm("mov.b32 %0, %1;" : "=r"(r) : "f"(value));
  return r;
}

struct Scale {
  float scale;    // what is stored: x ~= q * scale
  float inverse;  // what x is multiplied by before the conversion
};

// The scale of a block whose largest magnitude is `block_amax`, for a code format symmetric about 0 whose
// largest code is Format::kMaxCode:
//   amax = max(block_amax, Format::kAmaxFloor), scale = amax * fl(1 / kMaxCode), inverse = fl(1 / amax) * kMaxCode
// A NaN amax makes both NaN; an infinite one makes the scale +inf and the inverse 0.
template <typename Format>
__device__ __forceinline__ Scale symmetric_scale(float block_amax) {
  constexpr float kInverseMaxCode = 1.0f / Format::kMaxCode;  // the FP32 nearest
  const float amax = max_nan(block_amax, Format::kAmaxFloor);
  return {mul_rn(amax, kInverseMaxCode), mul_rn(reciprocal_rn(amax), Format::kMaxCode)};
}

}  // namespace fgemm::quant
