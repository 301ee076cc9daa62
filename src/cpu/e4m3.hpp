// FP8 E4M3, the "fn" variant of ARCHITECTURE.md (Semantics): 1 sign, 4 exponent (bias 7) and 3 mantissa bits, no
// infinities, 0x7F and 0xFF are NaN, the largest finite value is 448 and exponent 0 holds the subnormals (k * 2^-9).
#pragma once

namespace fgemm::cpu {

// kE4m3.value[code] is the value of the E4M3 byte `code`, exactly: every E4M3 value is an FP32 value (and a
// BF16 value). A plain aggregate, so files compiled for other instruction sets can read it without sharing
// any inline code.
struct E4m3Table {
  float value[256];
};

extern const E4m3Table kE4m3;

}  // namespace fgemm::cpu
