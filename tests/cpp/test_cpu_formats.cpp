// The number formats of the CPU backend: the E4M3 decoding table, rounding to BF16 and to FP16 (by
// bf16_from_float and f16_from_float, and by each kernel set's writing of D rows), and FP16's values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu/bf16.hpp"
#include "cpu/cpu_gemm.hpp"
#include "cpu/e4m3.hpp"
#include "cpu/f16.hpp"
#include "cpu/isa.hpp"

namespace fgemm::cpu {

// Found by argument-dependent lookup, so it must live in Isa's own namespace.
void PrintTo(Isa isa, std::ostream* out) { *out << isa_name(isa); }

namespace {

float bits_to_float(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

struct KnownCode {
  int code;
  float value;
};

void PrintTo(const KnownCode& known, std::ostream* out) { *out << "0x" << std::hex << known.code; }

class E4m3Code : public testing::TestWithParam<KnownCode> {};

TEST_P(E4m3Code, DecodesToItsValue) {
  const float value = kE4m3.value[GetParam().code];
  EXPECT_EQ(value, GetParam().value);
  EXPECT_EQ(std::signbit(value), std::signbit(GetParam().value));
}

INSTANTIATE_TEST_SUITE_P(cpu, E4m3Code,
                         testing::Values(KnownCode{0x00, 0.0f}, KnownCode{0x80, -0.0f},
                                         KnownCode{0x01, std::ldexp(1.0f, -9)},  // smallest subnormal
                                         KnownCode{0x07, std::ldexp(7.0f, -9)},  // largest subnormal
                                         KnownCode{0x08, std::ldexp(1.0f, -6)},  // smallest normal
                                         KnownCode{0x38, 1.0f}, KnownCode{0x3A, 1.25f}, KnownCode{0x40, 2.0f},
                                         KnownCode{0xB8, -1.0f}, KnownCode{0x7E, 448.0f},  // largest finite
                                         KnownCode{0xFE, -448.0f}),
                         [](const testing::TestParamInfo<KnownCode>& info) {
                           char name[8];
                           std::snprintf(name, sizeof name, "x%02X", info.param.code);
                           return std::string(name);
                         });

class E4m3Sign : public testing::TestWithParam<bool> {};

// 0x7F and 0xFF are the only NaNs; there are no infinities; magnitudes grow with the code; the top bit
// is the sign.
TEST_P(E4m3Sign, CodesAreOrderedSignedAndFiniteButForTheNan) {
  const int sign = GetParam() ? 0x80 : 0;
  EXPECT_TRUE(std::isnan(kE4m3.value[sign | 0x7F]));
  for (int magnitude = 0; magnitude < 0x7F; ++magnitude) {
    const float value = kE4m3.value[sign | magnitude];
    ASSERT_TRUE(std::isfinite(value)) << magnitude;
    EXPECT_EQ(value, GetParam() ? -kE4m3.value[magnitude] : kE4m3.value[magnitude]) << magnitude;
    if (magnitude > 0) EXPECT_LT(kE4m3.value[magnitude - 1], kE4m3.value[magnitude]) << magnitude;
  }
}

INSTANTIATE_TEST_SUITE_P(cpu, E4m3Sign, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) { return info.param ? "negative" : "positive"; });

struct Rounding {
  const char* name;
  std::uint32_t input;
  std::uint16_t expected;
};

void PrintTo(const Rounding& rounding, std::ostream* out) { *out << rounding.name; }

class Bf16Rounding : public testing::TestWithParam<Rounding> {};

TEST_P(Bf16Rounding, RoundsToNearestEven) {
  EXPECT_EQ(bf16_from_float(bits_to_float(GetParam().input)), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    cpu, Bf16Rounding,
    testing::Values(Rounding{"one", 0x3F800000u, 0x3F80}, Rounding{"tie_to_even_down", 0x3F808000u, 0x3F80},
                    Rounding{"tie_to_even_up", 0x3F818000u, 0x3F82}, Rounding{"above_tie", 0x3F808001u, 0x3F81},
                    Rounding{"negative_up", 0xBF80FFFFu, 0xBF81}, Rounding{"negative_zero", 0x80000000u, 0x8000},
                    Rounding{"subnormal_tie", 0x00018000u, 0x0002},
                    Rounding{"overflow_to_infinity", 0x7F7FFFFFu, 0x7F80}, Rounding{"infinity", 0xFF800000u, 0xFF80},
                    // A NaN whose payload sits in the low half must not round into an infinity.
                    Rounding{"low_payload_nan", 0x7F800001u, 0x7FC0}, Rounding{"negative_nan", 0xFFC00000u, 0xFFC0}),
    [](const testing::TestParamInfo<Rounding>& info) { return std::string(info.param.name); });

class Bf16RoundTrip : public testing::TestWithParam<int> {};

// Every BF16 value survives the trip through FP32; every NaN stays a NaN.
TEST_P(Bf16RoundTrip, KeepsEveryValueOfTheSignHalf) {
  for (std::uint32_t low = 0; low < 0x8000u; ++low) {
    const auto bits = static_cast<std::uint16_t>(GetParam() ? low | 0x8000u : low);
    const float value = float_from_bf16(bits);
    if (std::isnan(value))
      ASSERT_TRUE(std::isnan(float_from_bf16(bf16_from_float(value)))) << bits;
    else
      ASSERT_EQ(bf16_from_float(value), bits);
  }
}

INSTANTIATE_TEST_SUITE_P(cpu, Bf16RoundTrip, testing::Values(0, 1),
                         [](const testing::TestParamInfo<int>& info) { return info.param ? "negative" : "positive"; });

// Random bit patterns (every kind of FP32 value: normals, subnormals, infinities, NaNs) with the special
// cases of Bf16Rounding among them, in a row whose length is a multiple of no vector width.
std::vector<float> rounding_row() {
  std::vector<float> row = {bits_to_float(0x3F808000u), bits_to_float(0x3F818000u), bits_to_float(0x00018000u),
                            bits_to_float(0x7F7FFFFFu), bits_to_float(0x7F800001u), bits_to_float(0xFFC00000u)};
  std::mt19937 random(7);
  while (row.size() < 4099) row.push_back(bits_to_float(static_cast<std::uint32_t>(random())));
  return row;
}

// A kernel set's row writer (WriteBf16Row or WriteF16Row) rounds `sums`, and `sums` + C, exactly as `round` does.
void expect_rows_round_like(void (*write_row)(const float*, const float*, std::int64_t, std::uint16_t*),
                            std::uint16_t (*round)(float), const std::vector<float>& sums) {
  std::vector<float> c(sums.size());
  std::mt19937 random(11);
  for (float& value : c) value = std::uniform_real_distribution<float>(-4.0f, 4.0f)(random);
  std::vector<std::uint16_t> out(sums.size());
  for (bool with_c : {false, true}) {
    write_row(sums.data(), with_c ? c.data() : nullptr, static_cast<std::int64_t>(sums.size()), out.data());
    for (std::size_t j = 0; j < sums.size(); ++j)
      ASSERT_EQ(out[j], round(with_c ? sums[j] + c[j] : sums[j])) << "value " << j << ", C: " << with_c;
  }
}

class Bf16Row : public testing::TestWithParam<Isa> {};

// Each kernel set writes BF16 D rows with exactly the rounding of bf16_from_float, with and without C.
TEST_P(Bf16Row, RoundsLikeBf16FromFloat) {
  if (!cpu_supports(GetParam())) GTEST_SKIP() << "this CPU lacks the instruction set " << isa_name(GetParam());
  expect_rows_round_like(kernels_for(GetParam()).write_bf16_row, bf16_from_float, rounding_row());
}

INSTANTIATE_TEST_SUITE_P(cpu, Bf16Row, testing::ValuesIn(kAllIsas),
                         [](const testing::TestParamInfo<Isa>& info) { return std::string(isa_name(info.param)); });

class F16Rounding : public testing::TestWithParam<Rounding> {};

TEST_P(F16Rounding, RoundsToNearestEven) {
  EXPECT_EQ(f16_from_float(bits_to_float(GetParam().input)), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    cpu, F16Rounding,
    testing::Values(Rounding{"one", 0x3F800000u, 0x3C00}, Rounding{"tie_to_even_down", 0x3F801000u, 0x3C00},
                    Rounding{"tie_to_even_up", 0x3F803000u, 0x3C02}, Rounding{"above_tie", 0x3F801001u, 0x3C01},
                    Rounding{"negative_two", 0xC0000000u, 0xC000}, Rounding{"negative_zero", 0x80000000u, 0x8000},
                    Rounding{"largest_finite", 0x477FE000u, 0x7BFF},  // 65504
                    Rounding{"below_infinity_tie", 0x477FEFFFu, 0x7BFF},
                    Rounding{"infinity_tie", 0x477FF000u, 0x7C00},  // 65520 rounds to even: infinity
                    Rounding{"large_to_infinity", 0x4F000000u, 0x7C00}, Rounding{"infinity", 0xFF800000u, 0xFC00},
                    Rounding{"smallest_normal", 0x38800000u, 0x0400},  // 2^-14
                    Rounding{"subnormal_carry_to_normal", 0x387FF000u, 0x0400},
                    Rounding{"smallest_subnormal", 0x33800000u, 0x0001},  // 2^-24
                    Rounding{"half_smallest_subnormal", 0x33000000u, 0x0000},  // 2^-25: a tie, to even
                    Rounding{"above_half_smallest_subnormal", 0x33000001u, 0x0001},
                    Rounding{"subnormal_tie_down", 0x34200000u, 0x0002},  // 2.5 * 2^-24
                    Rounding{"subnormal_tie_up", 0x34600000u, 0x0004},    // 3.5 * 2^-24
                    Rounding{"fp32_subnormal", 0x00000001u, 0x0000}, Rounding{"low_payload_nan", 0x7F800001u, 0x7E00},
                    Rounding{"negative_nan", 0xFFC00000u, 0xFE00}),
    [](const testing::TestParamInfo<Rounding>& info) { return std::string(info.param.name); });

class F16Value : public testing::TestWithParam<int> {};

// Every FP16 bit pattern of one sign decodes to (-1)^s 2^(e-15) (1 + m/1024), or m 2^-24 for e = 0, infinity or
// NaN for e = 31; and every value but the NaNs survives the trip back.
TEST_P(F16Value, DecodesExactlyAndRoundTrips) {
  for (std::uint32_t low = 0; low < 0x8000u; ++low) {
    const auto bits = static_cast<std::uint16_t>(GetParam() ? low | 0x8000u : low);
    const int exponent = static_cast<int>(low >> 10), mantissa = static_cast<int>(low & 0x3FF);
    const float value = float_from_f16(bits);
    if (exponent == 31) {
      ASSERT_TRUE(mantissa == 0 ? std::isinf(value) : std::isnan(value)) << bits;
      if (mantissa != 0) {
        ASSERT_TRUE(std::isnan(float_from_f16(f16_from_float(value)))) << bits;
        continue;
      }
    } else {
      const double magnitude = exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
      ASSERT_EQ(value, GetParam() ? -magnitude : magnitude) << bits;
    }
    ASSERT_EQ(std::signbit(value), GetParam() == 1) << bits;
    ASSERT_EQ(f16_from_float(value), bits);
  }
}

INSTANTIATE_TEST_SUITE_P(cpu, F16Value, testing::Values(0, 1),
                         [](const testing::TestParamInfo<int>& info) { return info.param ? "negative" : "positive"; });

// Each FP16 value's neighbourhood: the value just below the midpoint to the next FP16 rounds down, the
// midpoint to the even one of the two, the value just above it up.
TEST(F16Midpoints, RoundToTheNearestAndTiesToEven) {
  for (std::uint16_t bits = 0; bits < 0x7BFF; ++bits) {
    const double low = float_from_f16(bits), high = float_from_f16(static_cast<std::uint16_t>(bits + 1));
    const float midpoint = static_cast<float>((low + high) / 2);  // exact in FP32
    ASSERT_EQ(f16_from_float(std::nextafter(midpoint, 0.0f)), bits);
    ASSERT_EQ(f16_from_float(midpoint), bits % 2 == 0 ? bits : bits + 1);
    ASSERT_EQ(f16_from_float(std::nextafter(midpoint, 1e9f)), bits + 1);
  }
}

class F16Row : public testing::TestWithParam<Isa> {};

// Each kernel set writes FP16 D rows with exactly the rounding of f16_from_float, with and without C.
TEST_P(F16Row, RoundsLikeF16FromFloat) {
  if (!cpu_supports(GetParam())) GTEST_SKIP() << "this CPU lacks the instruction set " << isa_name(GetParam());
  std::vector<float> sums = rounding_row();
  for (float& value : sums) value = std::ldexp(value, -100);  // many in FP16's range, some past it
  expect_rows_round_like(kernels_for(GetParam()).write_f16_row, f16_from_float, sums);
}

INSTANTIATE_TEST_SUITE_P(cpu, F16Row, testing::ValuesIn(kAllIsas),
                         [](const testing::TestParamInfo<Isa>& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace fgemm::cpu
