// IEEE binary16 (FP16) bit patterns: 1 sign, 5 exponent (bias 15) and 10 mantissa bits; exponent 0 holds the
// subnormals (k * 2^-24), exponent 31 infinities and NaNs. Every FP16 value is an FP32 value.
//
// Internal linkage on purpose: files compiled with different instruction-set flags include it (see
// avx512_common.hpp).
#pragma once

#include <cstdint>
#include <cstring>

namespace fgemm::cpu {
namespace {

// Exactly, in integer arithmetic (so that a CPU flushing subnormals to zero changes nothing).
inline float float_from_f16(std::uint16_t f16) {
  const std::uint32_t sign = static_cast<std::uint32_t>(f16 & 0x8000u) << 16;
  const std::uint32_t exponent = (f16 >> 10) & 0x1Fu, mantissa = f16 & 0x3FFu;
  std::uint32_t bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // A subnormal: mantissa * 2^-24, normalised so that its leading bit becomes FP32's implicit one.
    int shift = 0;
    while ((mantissa << shift & 0x400u) == 0) ++shift;
    bits = sign | (static_cast<std::uint32_t>(127 - 15 + 1 - shift) << 23) | ((mantissa << shift & 0x3FFu) << 13);
  }
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Rounds to the nearest FP16, ties to even; beyond the largest finite value (65504) to infinity; a NaN stays
// a NaN (quietened, sign kept).
inline std::uint16_t f16_from_float(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
  const int exponent = static_cast<int>(magnitude >> 23) - 127;  // of FP32
  if (exponent >= 16) return static_cast<std::uint16_t>(sign | 0x7C00u);
  // The significand (with its implicit one) in units of FP16's last place: 2^-24 for subnormals, 2^(e-10)
  // for normals; shifting right by `drop` bits leaves that many units, then rounding to nearest even.
  const std::uint32_t significand = (magnitude & 0x7FFFFFu) | 0x800000u;
  const int drop = exponent >= -14 ? 13 : 13 + (-14 - exponent);
  if (drop > 24) return sign;  // below half of the smallest subnormal, 2^-25
  std::uint32_t units = significand >> drop;
  const std::uint32_t rest = significand & ((1u << drop) - 1), half = 1u << (drop - 1);
  if (rest > half || (rest == half && (units & 1u))) ++units;
  // Normals: the implicit one (bit 10 of units) adds one to the biased exponent, which is why it is
  // exponent + 14 here; a carry out of the mantissa moves to the next exponent (or to infinity) by itself.
  const std::uint32_t encoded = exponent >= -14 ? (static_cast<std::uint32_t>(exponent + 14) << 10) + units : units;
  return static_cast<std::uint16_t>(sign | encoded);
}

// WriteF16Row (kernel_set.hpp), one value at a time.
inline void write_f16_row_portable(const float* sums, const float* c, std::int64_t cols, std::uint16_t* out) {
  for (std::int64_t j = 0; j < cols; ++j) out[j] = f16_from_float(c ? sums[j] + c[j] : sums[j]);
}

}  // namespace
}  // namespace fgemm::cpu
