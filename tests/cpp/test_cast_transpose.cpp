// The cast-transpose quantizers on the CPU: the transposed half against per_token_cast_to_fp8 of the transpose, the
// grouped layout's blocks, and the argument checks (which run before any backend, so they are the GPU's too).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "fgemm/quantize.hpp"

namespace fgemm {
namespace {

struct Quantized {
  std::vector<std::uint8_t> codes;
  std::vector<float> scales;
};

// per_token_cast_to_fp8 of the FP32 matrix x [rows, cols].
Quantized per_token(std::vector<float> x, std::int64_t rows, std::int64_t cols) {
  const std::int64_t col_blocks = (cols + 127) / 128;
  Quantized out{std::vector<std::uint8_t>(x.size()), std::vector<float>(rows * col_blocks)};
  per_token_cast_to_fp8(make_tensor_view(x.data(), DType::F32, {rows, cols}),
                        make_tensor_view(out.codes.data(), DType::E4M3, {rows, cols}),
                        make_tensor_view(out.scales.data(), DType::F32, {rows, col_blocks}));
  return out;
}

std::vector<float> transpose(const std::vector<float>& x, std::int64_t rows, std::int64_t cols) {
  std::vector<float> t(x.size());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
  return t;
}

bool same_scale(float a, float b) { return std::isnan(a) ? std::isnan(b) : a == b; }

// Values whose magnitudes change from column to column and row to row, a NaN and an infinity.
std::vector<float> sample(std::int64_t rows, std::int64_t cols) {
  std::vector<float> x(rows * cols);
  for (std::int64_t i = 0; i < rows * cols; ++i)
    x[i] = static_cast<float>((i * 7919) % 1000 - 500) * (1.0f + static_cast<float>(i % cols)) / 64.0f;
  x[3] = std::numeric_limits<float>::quiet_NaN();
  x[rows * cols / 2] = -std::numeric_limits<float>::infinity();
  return x;
}

// per_block_cast_to_fp8 of the FP32 matrix x [rows, cols].
Quantized per_block(std::vector<float> x, std::int64_t rows, std::int64_t cols) {
  const std::int64_t row_blocks = (rows + 127) / 128, col_blocks = (cols + 127) / 128;
  Quantized out{std::vector<std::uint8_t>(x.size()), std::vector<float>(row_blocks * col_blocks)};
  per_block_cast_to_fp8(make_tensor_view(x.data(), DType::F32, {rows, cols}),
                        make_tensor_view(out.codes.data(), DType::E4M3, {rows, cols}),
                        make_tensor_view(out.scales.data(), DType::F32, {row_blocks, col_blocks}));
  return out;
}

using CastTranspose = void (*)(const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                               const TensorView&, bool, Stream);

// cast_transpose_to_fp8 (block_scaled false) or per_block_cast_transpose_to_fp8 (true): both halves are the bits of
// the matching quantizer of x and of its transpose.
void expect_halves_of_x_and_its_transpose(bool block_scaled) {
  const CastTranspose cast = block_scaled ? &per_block_cast_transpose_to_fp8 : &cast_transpose_to_fp8;
  const auto quantize = block_scaled ? &per_block : &per_token;
  for (const auto& [rows, cols] :
       {std::pair<std::int64_t, std::int64_t>{200, 300}, {1, 129}, {130, 1}, {128, 256}, {256, 128}}) {
    const std::vector<float> x = sample(rows, cols);
    const Quantized row_wise = quantize(x, rows, cols);
    const Quantized of_transpose = quantize(transpose(x, rows, cols), cols, rows);
    const std::int64_t scale_rows = block_scaled ? (rows + 127) / 128 : rows;
    const std::int64_t transposed_scale_rows = block_scaled ? (cols + 127) / 128 : cols;
    std::vector<std::uint8_t> codes(x.size()), transposed(x.size());
    std::vector<float> scales(row_wise.scales.size()), transposed_scales(of_transpose.scales.size());
    const std::int64_t scale_cols = static_cast<std::int64_t>(scales.size()) / scale_rows;
    const std::int64_t transposed_scale_cols =
        static_cast<std::int64_t>(transposed_scales.size()) / transposed_scale_rows;
    cast(make_tensor_view(const_cast<float*>(x.data()), DType::F32, {rows, cols}),
         make_tensor_view(codes.data(), DType::E4M3, {rows, cols}),
         make_tensor_view(scales.data(), DType::F32, {scale_rows, scale_cols}),
         make_tensor_view(transposed.data(), DType::E4M3, {cols, rows}),
         make_tensor_view(transposed_scales.data(), DType::F32, {transposed_scale_rows, transposed_scale_cols}),
         false, nullptr);
    EXPECT_EQ(codes, row_wise.codes) << rows << " x " << cols;
    EXPECT_EQ(transposed, of_transpose.codes) << rows << " x " << cols;
    for (std::size_t i = 0; i < scales.size(); ++i) EXPECT_TRUE(same_scale(scales[i], row_wise.scales[i])) << i;
    for (std::size_t i = 0; i < transposed_scales.size(); ++i)
      EXPECT_TRUE(same_scale(transposed_scales[i], of_transpose.scales[i])) << i;
  }
}

TEST(CastTransposeCpu, BothHalvesAreThePerTokenQuantizationsOfXAndItsTranspose) {
  expect_halves_of_x_and_its_transpose(false);
}

TEST(CastTransposeCpu, PerBlockHalvesAreThePerBlockQuantizationsOfXAndItsTranspose) {
  expect_halves_of_x_and_its_transpose(true);
}

TEST(CastTransposeCpu, EachMatrixOfAStackIsCastTransposedOnItsOwn) {
  const std::int64_t groups = 3, rows = 200, cols = 130;
  const std::int64_t size = rows * cols, row_blocks = 2, col_blocks = 2, blocks = row_blocks * col_blocks;
  std::vector<float> x(groups * size);
  for (std::int64_t g = 0; g < groups; ++g) {
    const std::vector<float> matrix = sample(rows, cols);
    // A magnitude of its own per matrix, so that a scale taken from the wrong one shows.
    for (std::int64_t i = 0; i < size; ++i) x[g * size + i] = matrix[i] * static_cast<float>(1 << (4 * g));
  }
  std::vector<std::uint8_t> codes(x.size()), transposed(x.size());
  std::vector<float> scales(groups * blocks), transposed_scales(groups * blocks);
  per_block_cast_transpose_to_fp8(make_tensor_view(x.data(), DType::F32, {groups, rows, cols}),
                                  make_tensor_view(codes.data(), DType::E4M3, {groups, rows, cols}),
                                  make_tensor_view(scales.data(), DType::F32, {groups, row_blocks, col_blocks}),
                                  make_tensor_view(transposed.data(), DType::E4M3, {groups, cols, rows}),
                                  make_tensor_view(transposed_scales.data(), DType::F32,
                                                   {groups, col_blocks, row_blocks}));
  for (std::int64_t g = 0; g < groups; ++g) {
    const std::vector<float> matrix(x.begin() + g * size, x.begin() + (g + 1) * size);
    const Quantized row_wise = per_block(matrix, rows, cols);
    const Quantized of_transpose = per_block(transpose(matrix, rows, cols), cols, rows);
    EXPECT_EQ(std::vector<std::uint8_t>(codes.begin() + g * size, codes.begin() + (g + 1) * size), row_wise.codes)
        << "matrix " << g;
    EXPECT_EQ(std::vector<std::uint8_t>(transposed.begin() + g * size, transposed.begin() + (g + 1) * size),
              of_transpose.codes)
        << "matrix " << g;
    for (std::int64_t i = 0; i < blocks; ++i) {
      EXPECT_TRUE(same_scale(scales[g * blocks + i], row_wise.scales[i])) << g << ", " << i;
      EXPECT_TRUE(same_scale(transposed_scales[g * blocks + i], of_transpose.scales[i])) << g << ", " << i;
    }
  }
}

TEST(CastTransposeCpu, GroupedBlocksFollowEachOtherAndSkipEmptyExperts) {
  const std::int64_t h = 3;
  const std::vector<std::int64_t> ks = {128, 0, 256};
  std::vector<float> x(384 * h);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 997) - 400.0f;
  std::vector<std::uint8_t> codes(x.size()), flat(x.size());
  std::vector<float> scales(384), transposed_scales(h * 3);
  grouped_cast_transpose_to_fp8(make_tensor_view(x.data(), DType::F32, {384, h}), ks,
                                make_tensor_view(codes.data(), DType::E4M3, {384, h}),
                                make_tensor_view(scales.data(), DType::F32, {384, 1}),
                                make_tensor_view(flat.data(), DType::E4M3, {384 * h}),
                                make_tensor_view(transposed_scales.data(), DType::F32, {h, 3}));
  // Expert 2: rows 128 .. 383, its [3, 256] block at element 128 * 3.
  const std::vector<float> rows_of_expert(x.begin() + 128 * h, x.end());
  const Quantized expert = per_token(transpose(rows_of_expert, 256, h), h, 256);
  EXPECT_EQ(std::vector<std::uint8_t>(flat.begin() + 128 * h, flat.end()), expert.codes);
  for (std::int64_t c = 0; c < h; ++c) {
    EXPECT_EQ(transposed_scales[c * 3 + 1], expert.scales[c * 2]);
    EXPECT_EQ(transposed_scales[c * 3 + 2], expert.scales[c * 2 + 1]);
  }
}

// ---- argument checks -------------------------------------------------------------------------------------

struct Buffers {
  std::vector<std::uint16_t> x = std::vector<std::uint16_t>(256 * 64);
  std::vector<std::uint8_t> codes = std::vector<std::uint8_t>(256 * 64);
  std::vector<std::uint8_t> transposed = std::vector<std::uint8_t>(256 * 64);
  std::vector<float> scales = std::vector<float>(256);
  std::vector<float> transposed_scales = std::vector<float>(64 * 2);
  TensorView x_view = make_tensor_view(x.data(), DType::BF16, {256, 64});
  TensorView codes_view = make_tensor_view(codes.data(), DType::E4M3, {256, 64});
  TensorView scales_view = make_tensor_view(scales.data(), DType::F32, {256, 1});
  TensorView transposed_view = make_tensor_view(transposed.data(), DType::E4M3, {64, 256});
  TensorView transposed_scales_view = make_tensor_view(transposed_scales.data(), DType::F32, {64, 2});
};

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

TEST(CastTransposeArguments, NameTheArgumentAndWhatWasExpected) {
  Buffers b;
  const auto ungrouped = [&b] {
    cast_transpose_to_fp8(b.x_view, b.codes_view, b.scales_view, b.transposed_view, b.transposed_scales_view);
  };
  b.transposed_view.shape[0] = 63;
  EXPECT_EQ(error_of(ungrouped),
            "fgemm.cast_transpose_to_fp8: argument 'xt_fp8' expected shape [64, 256] (the shape of x's transpose, "
            "[K, M]), got [63, 256]");
  b.transposed_view.shape[0] = 64;
  b.transposed_scales_view.data = b.scales.data() + 8;
  EXPECT_EQ(error_of(ungrouped), "fgemm.cast_transpose_to_fp8: argument 'sft' must not overlap 'sf' in memory");

  Buffers g;
  g.transposed_view = make_tensor_view(g.transposed.data(), DType::E4M3, {256 * 64});
  std::vector<std::int64_t> ks = {128, -64, 192};
  const auto grouped = [&g, &ks] {
    grouped_cast_transpose_to_fp8(g.x_view, ks, g.codes_view, g.scales_view, g.transposed_view,
                                  g.transposed_scales_view);
  };
  EXPECT_EQ(error_of(grouped),
            "fgemm.grouped_cast_transpose_to_fp8: argument 'ks' expected non-negative counts, got ks[1] = -64");
  ks = {128, 64, 64};  // each expert padded to 128 rows: outputs of 384 rows, not x's 256
  EXPECT_EQ(error_of(grouped),
            "fgemm.grouped_cast_transpose_to_fp8: argument 'x_fp8' expected shape [384, 64] (the shape of x with "
            "each expert's rows padded to a multiple of 128), got [256, 64]");
  ks = {128};
  EXPECT_EQ(error_of(grouped),
            "fgemm.grouped_cast_transpose_to_fp8: argument 'ks' sums to 128, but x has 256 rows");
  ks = {0, 256};
  EXPECT_EQ(error_of(grouped), "no error");
  g.x_view.dtype = DType::F16;
  EXPECT_EQ(error_of(grouped),
            "fgemm.grouped_cast_transpose_to_fp8: argument 'x' expected dtype bfloat16 or float32, got float16");

  Buffers w;  // x [256, 64]: two block rows, one block column
  const auto per_block = [&w] {
    per_block_cast_transpose_to_fp8(w.x_view, w.codes_view, w.scales_view, w.transposed_view,
                                    w.transposed_scales_view);
  };
  EXPECT_EQ(error_of(per_block),
            "fgemm.per_block_cast_transpose_to_fp8: argument 'sf' expected shape [2, 1] (one scale per 128 x 128 "
            "block of x), got [256, 1]");
  w.scales_view = make_tensor_view(w.scales.data(), DType::F32, {2, 1});
  EXPECT_EQ(error_of(per_block),
            "fgemm.per_block_cast_transpose_to_fp8: argument 'sft' expected shape [1, 2] (one scale per 128 x 128 "
            "block of x's transpose, [ceil(K/128), ceil(N/128)]), got [64, 2]");
  w.transposed_scales_view = make_tensor_view(w.transposed_scales.data(), DType::F32, {1, 2});
  EXPECT_EQ(error_of(per_block), "no error");

  // A stack of two [128, 64] matrices: every output takes the leading 2.
  w.x_view = make_tensor_view(w.x.data(), DType::BF16, {2, 128, 64});
  w.codes_view = make_tensor_view(w.codes.data(), DType::E4M3, {2, 128, 64});
  w.scales_view = make_tensor_view(w.scales.data(), DType::F32, {2, 1, 1});
  w.transposed_view = make_tensor_view(w.transposed.data(), DType::E4M3, {64, 256});
  w.transposed_scales_view = make_tensor_view(w.transposed_scales.data(), DType::F32, {2, 1, 1});
  EXPECT_EQ(error_of(per_block),
            "fgemm.per_block_cast_transpose_to_fp8: argument 'xt_fp8' expected shape [2, 64, 128] (the shape of x's "
            "matrices transposed, [G, K, N]), got [64, 256]");
  w.transposed_view = make_tensor_view(w.transposed.data(), DType::E4M3, {2, 64, 128});
  EXPECT_EQ(error_of(per_block), "no error");
  w.x_view = make_tensor_view(w.x.data(), DType::BF16, {128});
  EXPECT_EQ(error_of(per_block),
            "fgemm.per_block_cast_transpose_to_fp8: argument 'x' expected a 2-D tensor [N, K] or a 3-D tensor "
            "[G, N, K], got shape [128]");
}

TEST(CastTransposeArguments, EmptyInputsReturnWithoutTouchingMemory) {
  const Device gpu{DeviceType::CUDA, 0};
  cast_transpose_to_fp8(make_tensor_view(nullptr, DType::BF16, {0, 256}, gpu),
                        make_tensor_view(nullptr, DType::E4M3, {0, 256}, gpu),
                        make_tensor_view(nullptr, DType::F32, {0, 2}, gpu),
                        make_tensor_view(nullptr, DType::E4M3, {256, 0}, gpu),
                        make_tensor_view(nullptr, DType::F32, {256, 0}, gpu));
  grouped_cast_transpose_to_fp8(make_tensor_view(nullptr, DType::BF16, {0, 64}, gpu), {0, 0},
                                make_tensor_view(nullptr, DType::E4M3, {0, 64}, gpu),
                                make_tensor_view(nullptr, DType::F32, {0, 1}, gpu),
                                make_tensor_view(nullptr, DType::E4M3, {0}, gpu),
                                make_tensor_view(nullptr, DType::F32, {64, 0}, gpu));
}

}  // namespace
}  // namespace fgemm
