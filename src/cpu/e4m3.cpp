#include "cpu/e4m3.hpp"

#include <limits>

namespace fgemm::cpu {
namespace {

constexpr float e4m3_value(int code) {
  const bool negative = (code & 0x80) != 0;
  const int exponent = (code >> 3) & 0xF;
  const int mantissa = code & 0x7;
  if (exponent == 0xF && mantissa == 0x7) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    return negative ? -nan : nan;
  }
  // value = significand * 2^power, with the implicit leading 1 (8 in units of the mantissa) for normals.
  float value = static_cast<float>(exponent == 0 ? mantissa : 8 + mantissa);
  int power = exponent == 0 ? -9 : exponent - 10;
  for (; power < 0; ++power) value *= 0.5f;
  for (; power > 0; --power) value *= 2.0f;
  return negative ? -value : value;
}

constexpr E4m3Table make_e4m3_table() {
  E4m3Table table{};
  for (int code = 0; code < 256; ++code) table.value[code] = e4m3_value(code);
  return table;
}

}  // namespace

constexpr E4m3Table kE4m3 = make_e4m3_table();

}  // namespace fgemm::cpu
