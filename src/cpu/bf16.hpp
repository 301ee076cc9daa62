// BF16 bit patterns: the upper half of an FP32.
#pragma once

#include <cstdint>
#include <cstring>

namespace fgemm::cpu {

// Rounds to the nearest BF16, ties to even; a NaN stays a NaN (quietened, sign kept).
inline std::uint16_t bf16_from_float(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

inline float float_from_bf16(std::uint16_t bf16) {
  const std::uint32_t bits = static_cast<std::uint32_t>(bf16) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

}  // namespace fgemm::cpu
