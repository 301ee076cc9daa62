// The INT8 quantization API on the CPU: the documented arithmetic on blocks with chosen values (the scale, ties
// to even, the floor, NaN and infinity), each quantizer's blocks, the input types and layouts, and the argument
// checks (which run before any backend, so they are the GPU's too).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/bf16.hpp"
#include "cpu/f16.hpp"
#include "fgemm/quantize_int8.hpp"

namespace fgemm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInverse127 = 1.0f / 127.0f;  // fl(1/127)
constexpr float kFloor = 1e-10f;

// The documented arithmetic for one block's amax, and the code of one element.
float scale_for(float amax) { return std::max(amax, kFloor) * kInverse127; }
float inverse_for(float amax) { return (1.0f / std::max(amax, kFloor)) * 127.0f; }
std::int8_t code_for(float x, float amax) { return static_cast<std::int8_t>(std::nearbyint(x * inverse_for(amax))); }

struct Quantized {
  std::vector<std::int8_t> codes;
  std::vector<float> scales;
};

// Quantizes the FP32 matrix x [rows, cols] per token.
Quantized per_token(std::vector<float> x, std::int64_t rows, std::int64_t cols) {
  Quantized out{std::vector<std::int8_t>(x.size()), std::vector<float>(rows)};
  per_token_cast_to_int8(make_tensor_view(x.data(), DType::F32, {rows, cols}),
                         make_tensor_view(out.codes.data(), DType::I8, {rows, cols}),
                         make_tensor_view(out.scales.data(), DType::F32, {rows}));
  return out;
}

// ---- the arithmetic on chosen rows ---------------------------------------------------------------------

TEST(QuantizeInt8Cpu, ScaleIsTheFlooredAmaxTimesTheFp32InverseOf127) {
  std::vector<float> x(3 * 200, 0.0f);
  x[7] = -3.0f;                  // row 0
  x[199] = 1.0f;                 // row 0, the last column
  x[200 + 130] = 1.0f / 3.0f;    // row 1
  x[400 + 5] = 1e-12f;           // row 2: below the floor
  const Quantized q = per_token(x, 3, 200);
  EXPECT_EQ(q.scales[0], 3.0f * kInverse127);
  EXPECT_EQ(q.scales[1], (1.0f / 3.0f) * kInverse127);
  EXPECT_EQ(q.scales[2], kFloor * kInverse127);
  EXPECT_EQ(q.codes[7], -127);
  EXPECT_EQ(q.codes[199], code_for(1.0f, 3.0f));  // 42.33 -> 42
  EXPECT_EQ(q.codes[199], 42);
  EXPECT_EQ(q.codes[200 + 130], 127);
  EXPECT_EQ(q.codes[400 + 5], code_for(1e-12f, 0.0f));  // 1e-12 * 1.27e12 = 1.27 -> 1
  EXPECT_EQ(q.codes[400 + 5], 1);
}

TEST(QuantizeInt8Cpu, RoundsHalfwayProductsToEven) {
  // amax = 127 makes the inverse 1 exactly (fl(fl(1/127) * 127) = 1), so each product is the element itself.
  ASSERT_EQ(inverse_for(127.0f), 1.0f);
  const std::vector<float> values = {127.0f, 0.5f, 1.5f, 2.5f, -2.5f, 3.5f, 126.5f, -126.5f, 2.4999998f, 2.5000002f};
  const std::vector<int> expected = {127, 0, 2, 2, -2, 4, 126, -126, 2, 3};
  std::vector<float> x(values);
  const Quantized q = per_token(x, 1, static_cast<std::int64_t>(x.size()));
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(q.codes[i], expected[i]) << values[i];
}

TEST(QuantizeInt8Cpu, CodesStayWithinPlusMinus127AndReachItAtTheLargestMagnitude) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-4, 4);
  const std::int64_t rows = 200, cols = 333;
  std::vector<float> x(rows * cols);
  for (auto& value : x) value = std::ldexp(mantissa(rng), exponent(rng));  // below 16 in magnitude
  for (std::int64_t r = 0; r < rows; ++r) x[r * cols + r % cols] = -std::ldexp(1.0f, 5 + exponent(rng));  // the amax
  const Quantized q = per_token(x, rows, cols);
  for (std::int64_t r = 0; r < rows; ++r) {
    float amax = 0.0f;
    for (std::int64_t c = 0; c < cols; ++c) amax = std::max(amax, std::fabs(x[r * cols + c]));
    EXPECT_EQ(q.scales[r], scale_for(amax)) << r;
    for (std::int64_t c = 0; c < cols; ++c) EXPECT_EQ(q.codes[r * cols + c], code_for(x[r * cols + c], amax));
  }
  EXPECT_EQ(*std::min_element(q.codes.begin(), q.codes.end()), -127);
}

TEST(QuantizeInt8Cpu, NanAndInfinityFollowTheDocumentedRules) {
  std::vector<float> x(5 * 64, 1.0f);
  x[3] = kNan;                              // row 0: NaN scale, codes 0
  x[64 + 3] = -kInf;                        // row 1: scale inf, codes 0
  x[64 + 4] = kNan;                         // row 1 too: a NaN wins over an infinity
  x[128 + 3] = kInf;                        // row 2: scale inf, codes 0
  x[192 + 3] = std::ldexp(0x1.fffffep0f, 127);  // row 3: the largest finite FP32 quantizes as any other value
  std::fill(x.begin() + 256, x.end(), -0.0f);  // row 4: all -0: the floor's scale, codes 0
  const Quantized q = per_token(x, 5, 64);
  EXPECT_TRUE(std::isnan(q.scales[0]));
  EXPECT_TRUE(std::isnan(q.scales[1]));
  EXPECT_EQ(q.scales[2], kInf);
  EXPECT_EQ(q.scales[3], scale_for(x[192 + 3]));
  EXPECT_TRUE(std::isfinite(q.scales[3]));
  EXPECT_EQ(q.scales[4], kFloor * kInverse127);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(q.codes[i], 0) << i;
    EXPECT_EQ(q.codes[64 + i], 0) << i;
    EXPECT_EQ(q.codes[128 + i], 0) << i;
    EXPECT_EQ(q.codes[192 + i], i == 3 ? 127 : 0) << i;  // 1 * 127 / 3.4e38 rounds to 0
    EXPECT_EQ(q.codes[256 + i], 0) << i;
  }
}

TEST(QuantizeInt8Cpu, ARowOfNoColumnsGetsTheFloorsScale) {
  std::vector<float> scales(3, -1.0f);
  per_token_cast_to_int8(make_tensor_view(nullptr, DType::F32, {3, 0}), make_tensor_view(nullptr, DType::I8, {3, 0}),
                         make_tensor_view(scales.data(), DType::F32, {3}));
  for (float scale : scales) EXPECT_EQ(scale, kFloor * kInverse127);
}

// ---- each quantizer's blocks -------------------------------------------------------------------------------

// A [rows, cols] matrix whose element (r, c) is 1 except one marker per block, so that each block's scale names
// the block: the marker of block (rb, cb) is 2 + rb * 100 + cb, at the block's last row and column.
std::vector<float> marked_blocks(std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
                                 std::int64_t block_cols) {
  std::vector<float> x(rows * cols, 1.0f);
  for (std::int64_t rb = 0; rb * block_rows < rows; ++rb)
    for (std::int64_t cb = 0; cb * block_cols < cols; ++cb) {
      const std::int64_t r = std::min(rows, (rb + 1) * block_rows) - 1, c = std::min(cols, (cb + 1) * block_cols) - 1;
      x[r * cols + c] = static_cast<float>(2 + rb * 100 + cb);
    }
  return x;
}

TEST(QuantizeInt8Cpu, PerTokenGroupScalesEachGroupOfColumns) {
  for (std::int64_t group_size : {32, 64, 128}) {
    const std::int64_t rows = 3, cols = 300, col_blocks = (cols + group_size - 1) / group_size;
    std::vector<float> x = marked_blocks(rows, cols, 1, group_size);
    std::vector<std::int8_t> codes(x.size());
    std::vector<float> scales(rows * col_blocks);
    per_token_group_cast_to_int8(make_tensor_view(x.data(), DType::F32, {rows, cols}),
                                 make_tensor_view(codes.data(), DType::I8, {rows, cols}),
                                 make_tensor_view(scales.data(), DType::F32, {rows, col_blocks}), group_size);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t cb = 0; cb < col_blocks; ++cb) {
        const float marker = static_cast<float>(2 + r * 100 + cb);
        EXPECT_EQ(scales[r * col_blocks + cb], scale_for(marker)) << group_size << " " << r << " " << cb;
        EXPECT_EQ(codes[r * cols + cb * group_size], code_for(1.0f, marker)) << group_size << " " << r << " " << cb;
      }
  }
}

TEST(QuantizeInt8Cpu, PerBlockSharesOneScaleOver128By128) {
  const std::int64_t rows = 130, cols = 200;
  std::vector<float> w = marked_blocks(rows, cols, 128, 128);
  std::vector<std::int8_t> codes(w.size());
  std::vector<float> scales(2 * 2);
  per_block_cast_to_int8(make_tensor_view(w.data(), DType::F32, {rows, cols}),
                         make_tensor_view(codes.data(), DType::I8, {rows, cols}),
                         make_tensor_view(scales.data(), DType::F32, {2, 2}));
  for (std::int64_t rb = 0; rb < 2; ++rb)
    for (std::int64_t cb = 0; cb < 2; ++cb) {
      const float marker = static_cast<float>(2 + rb * 100 + cb);
      EXPECT_EQ(scales[rb * 2 + cb], scale_for(marker));
      EXPECT_EQ(codes[(rb * 128) * cols + cb * 128], code_for(1.0f, marker));
    }
  EXPECT_EQ(codes[127 * cols + 127], 127);  // a marker
}

TEST(QuantizeInt8Cpu, PerChannelIsPerTokenOnTheRowsOfAWeight) {
  const std::int64_t rows = 7, cols = 100;
  std::vector<float> w = marked_blocks(rows, cols, 1, cols);
  const Quantized expected = per_token(w, rows, cols);
  std::vector<std::int8_t> codes(w.size());
  std::vector<float> scales(rows);
  per_channel_cast_to_int8(make_tensor_view(w.data(), DType::F32, {rows, cols}),
                           make_tensor_view(codes.data(), DType::I8, {rows, cols}),
                           make_tensor_view(scales.data(), DType::F32, {rows}));
  EXPECT_EQ(codes, expected.codes);
  EXPECT_EQ(scales, expected.scales);
  EXPECT_EQ(scales[6], scale_for(602.0f));
}

// ---- input types and layouts -----------------------------------------------------------------------------

TEST(QuantizeInt8Cpu, Bf16AndF16InputsQuantizeAsTheirExactFp32Values) {
  const std::int64_t rows = 4, cols = 64;
  std::vector<std::uint16_t> bf16(rows * cols), f16(rows * cols);
  std::vector<float> bf16_values(rows * cols), f16_values(rows * cols);
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    // Magnitudes from 2^-24 (an FP16 subnormal) to about 2^7.
    const float value = std::ldexp(static_cast<float>(i % 17) - 8.5f, static_cast<int>(i % 31) - 24);
    bf16[i] = cpu::bf16_from_float(value), f16[i] = cpu::f16_from_float(value);
    bf16_values[i] = cpu::float_from_bf16(bf16[i]), f16_values[i] = cpu::float_from_f16(f16[i]);
  }
  for (const auto& [bits, dtype, values] : {std::make_tuple(&bf16, DType::BF16, &bf16_values),
                                            std::make_tuple(&f16, DType::F16, &f16_values)}) {
    std::vector<std::int8_t> codes(rows * cols);
    std::vector<float> scales(rows);
    per_token_cast_to_int8(make_tensor_view(bits->data(), dtype, {rows, cols}),
                           make_tensor_view(codes.data(), DType::I8, {rows, cols}),
                           make_tensor_view(scales.data(), DType::F32, {rows}));
    const Quantized expected = per_token(*values, rows, cols);
    EXPECT_EQ(codes, expected.codes) << dtype_name(dtype);
    EXPECT_EQ(scales, expected.scales) << dtype_name(dtype);
  }
}

TEST(QuantizeInt8Cpu, StacksAndStridedViewsQuantizeEachMatrix) {
  // x [2, 3, 40] inside rows of 48 elements; scales [2, 3] MN-major in storage [3][4] per group.
  const std::int64_t groups = 2, rows = 3, cols = 40, row_stride = 48;
  std::vector<float> storage(groups * rows * row_stride, 1000.0f);  // the padding would dominate if read
  for (std::int64_t g = 0; g < groups; ++g)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c)
        storage[(g * rows + r) * row_stride + c] = static_cast<float>(c + 1) * static_cast<float>(g * rows + r + 1);
  TensorView x = make_tensor_view(storage.data(), DType::F32, {groups, rows, cols});
  x.strides[0] = rows * row_stride, x.strides[1] = row_stride;
  std::vector<std::int8_t> codes(groups * rows * cols);
  std::vector<float> scales(groups * 4, -1.0f);
  TensorView sf = make_tensor_view(scales.data(), DType::F32, {groups, rows});
  sf.strides[0] = 4;
  per_token_cast_to_int8(x, make_tensor_view(codes.data(), DType::I8, {groups, rows, cols}), sf);
  for (std::int64_t g = 0; g < groups; ++g) {
    for (std::int64_t r = 0; r < rows; ++r) {
      const float amax = 40.0f * static_cast<float>(g * rows + r + 1);
      EXPECT_EQ(scales[g * 4 + r], scale_for(amax));
      EXPECT_EQ(codes[(g * rows + r) * cols + 39], 127);
      EXPECT_EQ(codes[(g * rows + r) * cols], code_for(static_cast<float>(g * rows + r + 1), amax));
    }
    EXPECT_EQ(scales[g * 4 + 3], -1.0f);  // not a scale: left as it was
  }
}

// ---- argument checks -------------------------------------------------------------------------------------

struct Buffers {
  std::vector<std::uint16_t> x = std::vector<std::uint16_t>(4 * 256);
  std::vector<std::int8_t> codes = std::vector<std::int8_t>(4 * 256);
  std::vector<float> scales = std::vector<float>(4 * 2);
  TensorView x_view = make_tensor_view(x.data(), DType::BF16, {4, 256});
  TensorView codes_view = make_tensor_view(codes.data(), DType::I8, {4, 256});
  TensorView scales_view = make_tensor_view(scales.data(), DType::F32, {4});
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
     "argument 'x' expected dtype bfloat16, float16 or float32, got int32"},
    {"x_int8", [](Buffers& b) { b.x_view.dtype = DType::I8; }, ErrorKind::InvalidType,
     "argument 'x' expected dtype bfloat16, float16 or float32, got int8"},
    {"x_negative_size", [](Buffers& b) { b.x_view.shape[0] = -1; }, ErrorKind::InvalidValue,
     "argument 'x' has a negative size"},
    {"x_columns_strided",
     [](Buffers& b) { b.x_view.strides[1] = 2, b.x_view.shape[1] = 128, b.codes_view.shape[1] = 128; },
     ErrorKind::InvalidValue, "argument 'x' must be contiguous in its last dimension"},
    {"x_negative_stride", [](Buffers& b) { b.x_view.strides[0] = -256; }, ErrorKind::InvalidValue,
     "argument 'x' must not have negative strides"},
    {"x_null", [](Buffers& b) { b.x_view.data = nullptr; }, ErrorKind::InvalidValue,
     "argument 'x' has a null data pointer"},
    {"codes_e4m3", [](Buffers& b) { b.codes_view.dtype = DType::E4M3; }, ErrorKind::InvalidType,
     "argument 'x_int8' expected dtype int8, got float8_e4m3fn"},
    {"codes_shape", [](Buffers& b) { b.codes_view.shape[0] = 3; }, ErrorKind::InvalidValue,
     "argument 'x_int8' expected shape [4, 256] (the shape of x), got [3, 256]"},
    {"codes_on_gpu", [](Buffers& b) { b.codes_view.device = {DeviceType::CUDA, 0}; }, ErrorKind::InvalidValue,
     "argument 'x_int8' is on cuda:0 but the input is on cpu"},
    {"codes_rows_shared", [](Buffers& b) { b.codes_view.strides[0] = 0; }, ErrorKind::InvalidValue,
     "argument 'x_int8' has elements that share memory"},
    {"codes_overlap_x", [](Buffers& b) { b.codes_view.data = reinterpret_cast<std::int8_t*>(b.x.data()) + 100; },
     ErrorKind::InvalidValue, "argument 'x_int8' must not overlap 'x' in memory"},
    {"scales_two_dimensional", [](Buffers& b) { b.scales_view = make_tensor_view(b.scales.data(), DType::F32, {4, 1}); },
     ErrorKind::InvalidValue, "argument 'sf' expected shape [4] ([M]), got [4, 1]"},
    {"scales_dtype", [](Buffers& b) { b.scales_view.dtype = DType::BF16; }, ErrorKind::InvalidType,
     "argument 'sf' expected dtype float32, got bfloat16"},
    {"scales_shared", [](Buffers& b) { b.scales_view.strides[0] = 0; }, ErrorKind::InvalidValue,
     "argument 'sf' has elements that share memory"},
    {"scales_overlap_codes", [](Buffers& b) { b.scales_view.data = b.codes.data() + 16; }, ErrorKind::InvalidValue,
     "argument 'sf' must not overlap 'x_int8' in memory"},
    {"scales_on_gpu", [](Buffers& b) { b.scales_view.device = {DeviceType::CUDA, 1}; }, ErrorKind::InvalidValue,
     "argument 'sf' is on cuda:1 but the input is on cpu"},
};

class QuantizeInt8Arguments : public testing::TestWithParam<BrokenRule> {};

TEST_P(QuantizeInt8Arguments, ThrowTheRightKindNamingTheArgument) {
  Buffers buffers;
  GetParam().break_it(buffers);
  try {
    per_token_cast_to_int8(buffers.x_view, buffers.codes_view, buffers.scales_view);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), GetParam().kind);
    EXPECT_NE(std::string(error.what()).find(GetParam().message), std::string::npos) << error.what();
    EXPECT_EQ(std::string(error.what()).rfind("fgemm.per_token_cast_to_int8: ", 0), 0u) << error.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Rules, QuantizeInt8Arguments, testing::ValuesIn(kBrokenRules),
                         [](const auto& info) { return std::string(info.param.name); });

std::string message_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

TEST(QuantizeInt8Arguments, EachQuantizerNamesItsOwnArgumentsAndScaleShape) {
  Buffers b;
  EXPECT_EQ(message_of([&] { per_channel_cast_to_int8(b.x_view, b.codes_view, b.codes_view); }),
            "fgemm.per_channel_cast_to_int8: argument 'sf' expected dtype float32, got int8");
  EXPECT_EQ(message_of([&] { per_channel_cast_to_int8(b.x_view, b.x_view, b.scales_view); }),
            "fgemm.per_channel_cast_to_int8: argument 'w_int8' expected dtype int8, got bfloat16");
  const TensorView two_columns = make_tensor_view(b.scales.data(), DType::F32, {4, 2});
  EXPECT_EQ(message_of([&] { per_channel_cast_to_int8(b.x_view, b.codes_view, two_columns); }),
            "fgemm.per_channel_cast_to_int8: argument 'sf' expected shape [4] ([N]), got [4, 2]");
  EXPECT_EQ(message_of([&] { per_token_group_cast_to_int8(b.x_view, b.codes_view, two_columns, 64); }),
            "fgemm.per_token_group_cast_to_int8: argument 'sf' expected shape [4, 4] ([M, ceil(K/64)]), got [4, 2]");
  EXPECT_EQ(message_of([&] { per_block_cast_to_int8(b.x_view, b.codes_view, two_columns); }),
            "fgemm.per_block_cast_to_int8: argument 'sf' expected shape [1, 2] ([ceil(N/128), ceil(K/128)]), got "
            "[4, 2]");
  TensorView stack = make_tensor_view(b.x.data(), DType::BF16, {2, 2, 256});
  TensorView stack_codes = make_tensor_view(b.codes.data(), DType::I8, {2, 2, 256});
  EXPECT_EQ(message_of([&] { per_token_cast_to_int8(stack, stack_codes, b.scales_view); }),
            "fgemm.per_token_cast_to_int8: argument 'sf' expected shape [2, 2] ([G, M]), got [4]");
  EXPECT_EQ(message_of([&] { per_block_cast_to_int8(make_tensor_view(b.x.data(), DType::BF16, {256}), b.codes_view,
                                                    b.scales_view); }),
            "fgemm.per_block_cast_to_int8: argument 'w' expected a 2-D tensor [N, K] or a 3-D tensor [G, N, K], got "
            "shape [256]");
}

TEST(QuantizeInt8Arguments, GroupSizeIs32Or64Or128) {
  Buffers b;
  const TensorView scales = make_tensor_view(b.scales.data(), DType::F32, {4, 2});
  for (std::int64_t group_size : {0, -128, 16, 48, 96, 256}) {
    try {
      per_token_group_cast_to_int8(b.x_view, b.codes_view, scales, group_size);
      FAIL() << "no error for " << group_size;
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::InvalidValue);
      EXPECT_EQ(std::string(error.what()), "fgemm.per_token_group_cast_to_int8: argument 'group_size' must be 32, 64 "
                                           "or 128, got " + std::to_string(group_size));
    }
  }
  per_token_group_cast_to_int8(b.x_view, b.codes_view, scales, 128);  // [4, ceil(256/128)]
}

TEST(QuantizeInt8Arguments, EmptyInputsReturnWithoutTouchingMemory) {
  // Null pointers are fine where there is nothing to read or write; on a GPU this launches nothing either.
  per_token_cast_to_int8(make_tensor_view(nullptr, DType::BF16, {0, 256}),
                         make_tensor_view(nullptr, DType::I8, {0, 256}), make_tensor_view(nullptr, DType::F32, {0}));
  per_block_cast_to_int8(make_tensor_view(nullptr, DType::F32, {3, 0, 64}),
                         make_tensor_view(nullptr, DType::I8, {3, 0, 64}),
                         make_tensor_view(nullptr, DType::F32, {3, 0, 1}));
  per_token_group_cast_to_int8(make_tensor_view(nullptr, DType::F16, {5, 0}), make_tensor_view(nullptr, DType::I8, {5, 0}),
                               make_tensor_view(nullptr, DType::F32, {5, 0}), 32);
  const Device gpu{DeviceType::CUDA, 0};
  per_channel_cast_to_int8(make_tensor_view(nullptr, DType::BF16, {0, 7, 256}, gpu),
                           make_tensor_view(nullptr, DType::I8, {0, 7, 256}, gpu),
                           make_tensor_view(nullptr, DType::F32, {0, 7}, gpu));
}

}  // namespace
}  // namespace fgemm
