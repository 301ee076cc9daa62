// The quantization API on the CPU: the E4M3 rounding, the documented arithmetic on blocks with chosen values,
// and the argument checks (which run before any backend, so they are the GPU's too).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cpu/e4m3.hpp"
#include "cpu/quantize.hpp"
#include "fgemm/quantize.hpp"

namespace fgemm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

bool is_nan_code(std::uint8_t code) { return (code & 0x7F) == 0x7F; }

// ---- rounding to E4M3 ----------------------------------------------------------------------------------

TEST(E4m3FromFloat, EveryValueEncodesToItsCode) {
  for (int code = 0; code < 256; ++code) {
    if (is_nan_code(static_cast<std::uint8_t>(code))) continue;
    EXPECT_EQ(cpu::e4m3_from_float(cpu::kE4m3.value[code]), code) << "code " << code;
  }
}

TEST(E4m3FromFloat, MidpointsRoundToTheEvenCodeAndOthersToTheNearest) {
  for (int code = 0; code < 0x7E; ++code) {
    const float low = cpu::kE4m3.value[code], high = cpu::kE4m3.value[code + 1];
    const float middle = (low + high) / 2;  // exact: both have 3 mantissa bits
    const int even = code % 2 == 0 ? code : code + 1;
    EXPECT_EQ(cpu::e4m3_from_float(middle), even) << "between codes " << code << " and " << code + 1;
    EXPECT_EQ(cpu::e4m3_from_float(std::nextafter(middle, 0.0f)), code);
    EXPECT_EQ(cpu::e4m3_from_float(std::nextafter(middle, kInf)), code + 1);
    EXPECT_EQ(cpu::e4m3_from_float(-std::nextafter(middle, kInf)), 0x80 | (code + 1));
  }
}

TEST(E4m3FromFloat, SaturatesAndKeepsNanAndTheSignOfZero) {
  EXPECT_EQ(cpu::e4m3_from_float(464.0f), 0x7E);  // the midpoint above 448 rounds to even: 448
  EXPECT_EQ(cpu::e4m3_from_float(465.0f), 0x7E);
  EXPECT_EQ(cpu::e4m3_from_float(1e30f), 0x7E);
  EXPECT_EQ(cpu::e4m3_from_float(kInf), 0x7E);
  EXPECT_EQ(cpu::e4m3_from_float(-kInf), 0xFE);
  EXPECT_EQ(cpu::e4m3_from_float(kNan), 0x7F);
  EXPECT_EQ(cpu::e4m3_from_float(-kNan), 0xFF);
  EXPECT_EQ(cpu::e4m3_from_float(-0.0f), 0x80);
  EXPECT_EQ(cpu::e4m3_from_float(std::ldexp(1.0f, -10)), 0x00);   // half the least subnormal: to even, 0
  EXPECT_EQ(cpu::e4m3_from_float(std::ldexp(1.0f, -140)), 0x00);  // an FP32 subnormal
}

// ---- the arithmetic on chosen blocks -----------------------------------------------------------------

float bits_to_float(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

struct Quantized {
  std::vector<std::uint8_t> codes;
  std::vector<float> scales;
};

// Quantizes the FP32 matrix x [rows, cols] per token.
Quantized per_token(std::vector<float> x, std::int64_t rows, std::int64_t cols, bool use_ue8m0) {
  const std::int64_t col_blocks = (cols + 127) / 128;
  Quantized out{std::vector<std::uint8_t>(x.size()), std::vector<float>(rows * col_blocks)};
  per_token_cast_to_fp8(make_tensor_view(x.data(), DType::F32, {rows, cols}),
                        make_tensor_view(out.codes.data(), DType::E4M3, {rows, cols}),
                        make_tensor_view(out.scales.data(), DType::F32, {rows, col_blocks}), use_ue8m0);
  return out;
}

TEST(QuantizeCpu, ScaleIsTheFlooredAmaxTimesTheFp32InverseOf448) {
  std::vector<float> x(2 * 200, 0.0f);
  x[7] = -3.0f;          // row 0, block 0
  x[130] = 1.0f / 3.0f;  // row 0, block 1 (partial: 72 columns)
  x[200 + 5] = 1e-6f;    // row 1, block 0: below the floor
  const Quantized q = per_token(x, 2, 200, false);
  const float inverse_448 = 1.0f / 448.0f;
  EXPECT_EQ(q.scales[0], 3.0f * inverse_448);
  EXPECT_EQ(q.scales[1], (1.0f / 3.0f) * inverse_448);
  EXPECT_EQ(q.scales[2], 1e-4f * inverse_448);
  EXPECT_EQ(q.scales[3], 1e-4f * inverse_448);  // all zero
  EXPECT_EQ(q.codes[7], 0xFE);                  // -448
  EXPECT_EQ(q.codes[130], 0x7E);
  EXPECT_EQ(q.codes[200 + 5], cpu::e4m3_from_float(1e-6f * ((1.0f / 1e-4f) * 448.0f)));
}

TEST(QuantizeCpu, Ue8m0ScalesAreTheLeastPowerOfTwoNotBelowThePlainScale) {
  const float inverse_448 = 1.0f / 448.0f;
  // 448 * 2^-7 gives a plain scale of 2^-7 (exactly or an ulp off); its successor a scale above 2^-7.
  for (float amax : {448.0f * 0.0078125f, std::nextafter(448.0f * 0.0078125f * 1.0001f, 0.0f), 1.0f, 100.0f}) {
    std::vector<float> x(128, 0.0f);
    x[0] = amax;
    const Quantized q = per_token(x, 1, 128, true);
    const float plain = amax * inverse_448;
    int exponent;
    const float mantissa = std::frexp(q.scales[0], &exponent);
    EXPECT_EQ(mantissa, 0.5f) << amax;
    EXPECT_GE(q.scales[0], plain) << amax;
    EXPECT_LT(q.scales[0] / 2, plain) << amax;
    EXPECT_EQ(q.codes[0], cpu::e4m3_from_float(amax / q.scales[0])) << amax;
  }
}

TEST(QuantizeCpu, NanAndInfinityFollowTheDocumentedRules) {
  std::vector<float> x(3 * 128, 1.0f);
  x[3] = kNan;                             // row 0: NaN scale, NaN codes
  x[128 + 3] = -kInf;                      // row 1: scale inf, -inf -> NaN, the others 0
  x[256 + 3] = bits_to_float(0x7F7FFFFF);  // row 2: the largest finite FP32 quantizes as any other value
  const Quantized q = per_token(x, 3, 128, false);
  EXPECT_TRUE(std::isnan(q.scales[0]));
  for (int i = 0; i < 128; ++i) EXPECT_TRUE(is_nan_code(q.codes[i])) << i;
  EXPECT_EQ(q.scales[1], kInf);
  for (int i = 0; i < 128; ++i) EXPECT_EQ(q.codes[128 + i], i == 3 ? q.codes[128 + 3] : 0x00) << i;
  EXPECT_TRUE(is_nan_code(q.codes[128 + 3]));
  EXPECT_TRUE(std::isfinite(q.scales[2]));
  EXPECT_EQ(q.codes[256 + 3], 0x7E);
}

TEST(QuantizeCpu, PerBlockSharesOneScaleOver128Rows) {
  const std::int64_t rows = 130, cols = 16;
  std::vector<float> w(rows * cols, 0.5f);
  w[127 * cols] = 8.0f;  // the last row of the first block
  w[129 * cols] = 2.0f;  // in the second, partial block
  std::vector<std::uint8_t> codes(w.size());
  std::vector<float> scales(2);
  per_block_cast_to_fp8(make_tensor_view(w.data(), DType::F32, {rows, cols}),
                        make_tensor_view(codes.data(), DType::E4M3, {rows, cols}),
                        make_tensor_view(scales.data(), DType::F32, {2, 1}));
  EXPECT_EQ(scales[0], 8.0f * (1.0f / 448.0f));
  EXPECT_EQ(scales[1], 2.0f * (1.0f / 448.0f));
  EXPECT_EQ(codes[0], cpu::e4m3_from_float(0.5f * ((1.0f / 8.0f) * 448.0f)));           // 28
  EXPECT_EQ(codes[128 * cols], cpu::e4m3_from_float(0.5f * ((1.0f / 2.0f) * 448.0f)));  // 112
}

TEST(QuantizeCpu, ScalesGoWhereTheirStridesSay) {
  // The MN-major, TMA-aligned layout: [3, 2] scales with strides (1, 4).
  std::vector<float> x(3 * 256);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i % 256 < 128 ? i / 256 + 1 : 10 * (i / 256 + 1));
  std::vector<std::uint8_t> codes(x.size());
  std::vector<float> storage(2 * 4, -1.0f);
  TensorView sf = make_tensor_view(storage.data(), DType::F32, {3, 2});
  sf.strides[0] = 1;
  sf.strides[1] = 4;
  per_token_cast_to_fp8(make_tensor_view(x.data(), DType::F32, {3, 256}),
                        make_tensor_view(codes.data(), DType::E4M3, {3, 256}), sf);
  for (int m = 0; m < 3; ++m) {
    EXPECT_EQ(storage[m], (m + 1) * (1.0f / 448.0f));
    EXPECT_EQ(storage[4 + m], 10.0f * (m + 1) * (1.0f / 448.0f));
  }
  EXPECT_EQ(storage[3], -1.0f);  // the padding row is not written
  EXPECT_EQ(storage[7], -1.0f);
}

TEST(QuantizeCpu, CopyScalesTransposesIntoAnyLayout) {
  std::vector<float> source(2 * 5 * 3);
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<float>(i);
  std::vector<float> destination(2 * 3 * 8, -1.0f);
  TensorView out = make_tensor_view(destination.data(), DType::F32, {2, 5, 3});
  out.strides[0] = 24, out.strides[1] = 1, out.strides[2] = 8;
  copy_scales(make_tensor_view(source.data(), DType::F32, {2, 5, 3}), out);
  for (int g = 0; g < 2; ++g)
    for (int m = 0; m < 5; ++m)
      for (int kb = 0; kb < 3; ++kb) EXPECT_EQ(destination[g * 24 + kb * 8 + m], source[g * 15 + m * 3 + kb]);
}

// ---- argument checks -------------------------------------------------------------------------------------

struct Buffers {
  std::vector<std::uint16_t> x = std::vector<std::uint16_t>(4 * 256);
  std::vector<std::uint8_t> codes = std::vector<std::uint8_t>(4 * 256);
  std::vector<float> scales = std::vector<float>(4 * 2);
  TensorView x_view = make_tensor_view(x.data(), DType::BF16, {4, 256});
  TensorView codes_view = make_tensor_view(codes.data(), DType::E4M3, {4, 256});
  TensorView scales_view = make_tensor_view(scales.data(), DType::F32, {4, 2});
};

struct BrokenRule {
  const char* name;
  std::function<void(Buffers&)> break_it;
  ErrorKind kind;
  const char* message;  // a part of the message, naming the argument
};

const BrokenRule kBrokenRules[] = {
    {"x_one_dimensional", [](Buffers& b) { b.x_view.ndim = 1; }, ErrorKind::InvalidValue,
     "argument 'x' expected a 2-D tensor [M, K] or a 3-D tensor [G, M, K], got shape [4]"},
    {"x_int32", [](Buffers& b) { b.x_view.dtype = DType::I32; }, ErrorKind::InvalidType,
     "argument 'x' expected dtype bfloat16 or float32, got int32"},
    {"x_negative_size", [](Buffers& b) { b.x_view.shape[0] = -1; }, ErrorKind::InvalidValue,
     "argument 'x' has a negative size"},
    {"x_columns_strided",
     [](Buffers& b) {
       b.x_view.strides[1] = 2, b.x_view.shape[1] = 128, b.codes_view.shape[1] = 128, b.scales_view.shape[1] = 1;
     },
     ErrorKind::InvalidValue, "argument 'x' must be contiguous in its last dimension"},
    {"x_negative_stride", [](Buffers& b) { b.x_view.strides[0] = -256; }, ErrorKind::InvalidValue,
     "argument 'x' must not have negative strides"},
    {"x_null", [](Buffers& b) { b.x_view.data = nullptr; }, ErrorKind::InvalidValue,
     "argument 'x' has a null data pointer"},
    {"codes_bf16", [](Buffers& b) { b.codes_view.dtype = DType::BF16; }, ErrorKind::InvalidType,
     "argument 'x_fp8' expected dtype float8_e4m3fn, got bfloat16"},
    {"codes_shape", [](Buffers& b) { b.codes_view.shape[0] = 3; }, ErrorKind::InvalidValue,
     "argument 'x_fp8' expected shape [4, 256] (the shape of x), got [3, 256]"},
    {"codes_on_gpu",
     [](Buffers& b) {
       b.codes_view.device = {DeviceType::CUDA, 0};
     },
     ErrorKind::InvalidValue, "argument 'x_fp8' is on cuda:0 but the input is on cpu"},
    {"codes_rows_shared", [](Buffers& b) { b.codes_view.strides[0] = 0; }, ErrorKind::InvalidValue,
     "argument 'x_fp8' has elements that share memory"},
    {"codes_overlap_x", [](Buffers& b) { b.codes_view.data = reinterpret_cast<std::uint8_t*>(b.x.data()) + 100; },
     ErrorKind::InvalidValue, "argument 'x_fp8' must not overlap 'x' in memory"},
    {"scales_shape", [](Buffers& b) { b.scales_view.shape[1] = 1; }, ErrorKind::InvalidValue,
     "argument 'sf' expected shape [4, 2] ([M, ceil(K/128)]), got [4, 1]"},
    {"scales_dtype", [](Buffers& b) { b.scales_view.dtype = DType::BF16; }, ErrorKind::InvalidType,
     "argument 'sf' expected dtype float32, got bfloat16"},
    {"scales_overlap_codes", [](Buffers& b) { b.scales_view.data = b.codes.data() + 16; }, ErrorKind::InvalidValue,
     "argument 'sf' must not overlap 'x_fp8' in memory"},
};

class QuantizeArguments : public testing::TestWithParam<BrokenRule> {};

TEST_P(QuantizeArguments, ThrowTheRightKindNamingTheArgument) {
  Buffers buffers;
  GetParam().break_it(buffers);
  try {
    per_token_cast_to_fp8(buffers.x_view, buffers.codes_view, buffers.scales_view);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), GetParam().kind);
    EXPECT_NE(std::string(error.what()).find(GetParam().message), std::string::npos) << error.what();
    EXPECT_EQ(std::string(error.what()).rfind("fgemm.per_token_cast_to_fp8: ", 0), 0u) << error.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Rules, QuantizeArguments, testing::ValuesIn(kBrokenRules),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(QuantizeArguments, PerBlockNamesItsOwnArgumentsAndScaleShape) {
  Buffers b;
  try {
    per_block_cast_to_fp8(b.x_view, b.codes_view, b.scales_view);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(),
                 "fgemm.per_block_cast_to_fp8: argument 'sf' expected shape [1, 2] ([ceil(N/128), ceil(K/128)]), "
                 "got [4, 2]");
  }
}

TEST(QuantizeArguments, CopyScalesChecksShapeAndOverlap) {
  std::vector<float> a(10), b(10);
  const TensorView sf = make_tensor_view(a.data(), DType::F32, {5, 2});
  EXPECT_THROW(copy_scales(sf, make_tensor_view(b.data(), DType::F32, {2, 5})), Error);
  TensorView onto_itself = make_tensor_view(a.data(), DType::F32, {5, 2});
  onto_itself.strides[0] = 1, onto_itself.strides[1] = 5;
  try {
    copy_scales(sf, onto_itself);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "fgemm.copy_scales: argument 'out' must not overlap 'sf' in memory");
  }
}

TEST(QuantizeArguments, EmptyInputsReturnWithoutTouchingMemory) {
  // Null pointers are fine where there is nothing to read or write; on a GPU this launches nothing either.
  per_token_cast_to_fp8(make_tensor_view(nullptr, DType::BF16, {0, 256}),
                        make_tensor_view(nullptr, DType::E4M3, {0, 256}),
                        make_tensor_view(nullptr, DType::F32, {0, 2}));
  per_block_cast_to_fp8(make_tensor_view(nullptr, DType::F32, {3, 0, 64}),
                        make_tensor_view(nullptr, DType::E4M3, {3, 0, 64}),
                        make_tensor_view(nullptr, DType::F32, {3, 0, 1}));
  const Device gpu{DeviceType::CUDA, 0};
  per_token_cast_to_fp8(make_tensor_view(nullptr, DType::BF16, {0, 256}, gpu),
                        make_tensor_view(nullptr, DType::E4M3, {0, 256}, gpu),
                        make_tensor_view(nullptr, DType::F32, {0, 2}, gpu));
}

}  // namespace
}  // namespace fgemm
