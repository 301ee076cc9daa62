// fgemm::warmup without a GPU: it compiles, into the disk cache, exactly the kernels the heuristics choose
// over the M range (the 16-bit GEMMs' few-row kernel among them); a second warm-up finds all of them there; bad
// shapes and ranges are refused by name.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "cuda/few_rows.hpp"
#include "cuda/heuristics.hpp"
#include "fgemm/few_rows_params.cuh"
#include "fgemm/warmup.hpp"
#include "jit/process.hpp"
#include "test_jit_support.hpp"

namespace fgemm {
namespace {

// The message of the error that a warm-up of `shape` for M from 1 to 9 throws.
std::string refusal_of(const WarmupShape& shape) {
  return test::thrown_error([&] { warmup({shape}, 1, 9, std::nullopt); }).what();
}

WarmupShape shape_of(GemmOperation operation, std::int64_t n, std::int64_t k) {
  WarmupShape shape;
  shape.operation = operation;
  shape.n = n;
  shape.k = k;
  return shape;
}

TEST(Warmup, CompilesTheChosenKernelsOnceIntoTheDiskCache) {
  const jit::TemporaryDirectory cache;
  const test::ScopedEnvironment cache_dir("FGEMM_CACHE_DIR", cache.path().c_str());
  const WarmupShape shape = shape_of(GemmOperation::Fp8GemmNt, 512, 256);
  constexpr std::int64_t kMMin = 1, kMMax = 300;

  std::size_t reported = 0;
  const auto first = warmup({shape, shape}, kMMin, kMMax, std::nullopt, 2,
                            [&](const WarmedKernel&, std::size_t done, std::size_t total) {
                              ++reported;
                              EXPECT_EQ(done, reported);
                              EXPECT_GE(total, done);
                            });
  // The same kernels as the heuristics' choices over the range, each once although the shape came twice.
  cuda::ProblemSize problem;
  problem.shape.n = shape.n;
  problem.shape.k = shape.k;
  problem.shape.sfa_by_tma = true;
  std::set<std::string> expected;
  for (const auto& config : cuda::configs_for_m_range(problem, kMMin, kMMax, cuda::DeviceLimits{}))
    expected.insert(config.name());
  std::set<std::string> compiled;
  for (const WarmedKernel& kernel : first) {
    EXPECT_TRUE(kernel.compiled) << kernel.name;
    EXPECT_GT(kernel.seconds, 0.0);
    compiled.insert(kernel.name);
  }
  EXPECT_EQ(compiled, expected);
  EXPECT_EQ(first.size(), expected.size());
  EXPECT_EQ(reported, first.size());
  EXPECT_GE(expected.size(), 2u);  // M from 1 to 300 takes more than one tile shape

  const auto second = warmup({shape}, kMMin, kMMax, std::nullopt, 2);
  ASSERT_EQ(second.size(), first.size());
  for (const WarmedKernel& kernel : second) EXPECT_FALSE(kernel.compiled) << kernel.name;
}

// The 16-bit GEMMs: bf16_gemm_nt of up to eight rows runs the few-row kernel (one configuration for them all) and the
// skeleton's tiles for the rest of the range, each kernel the one the GEMM's call asks for; fp16_gemm_tn (A and B
// MN-major) into FP32 with a C runs the tiles over the whole range. Any K: the 16-bit GEMMs' rows may be padded.
TEST(Warmup, CompilesTheFewRowKernelAndTheTilesOfTheSixteenBitGemms) {
  const jit::TemporaryDirectory cache;
  const test::ScopedEnvironment cache_dir("FGEMM_CACHE_DIR", cache.path().c_str());
  const WarmupShape nt = shape_of(GemmOperation::Bf16GemmNt, 512, 256);
  WarmupShape tn = shape_of(GemmOperation::Fp16GemmTn, 264, 100);
  tn.d_dtype = DType::F32;
  tn.with_c = true;
  constexpr std::int64_t kMMax = 200;
  const auto warmed = warmup({nt, tn}, 1, kMMax, std::nullopt, 2);

  const cuda::DeviceLimits h100;
  cuda::ProblemSize nt_problem;
  nt_problem.m = 1;
  nt_problem.shape.n = nt.n;
  nt_problem.shape.k = nt.k;
  nt_problem.shape.ab_dtype = DType::BF16;
  nt_problem.shape.scaling = detail::Scaling::None;
  const auto few_rows = cuda::few_rows_config(nt_problem, h100.num_sms, {});
  ASSERT_TRUE(few_rows.has_value());
  std::set<std::string> expected{few_rows->name()};
  for (const auto& config : cuda::configs_for_m_range(nt_problem, few_rows::kMaxRows + 1, kMMax, h100))
    expected.insert(config.name());
  cuda::ProblemSize tn_problem = nt_problem;
  tn_problem.shape.n = tn.n;
  tn_problem.shape.k = tn.k;
  tn_problem.shape.ab_dtype = DType::F16;
  tn_problem.shape.a_mn_major = tn_problem.shape.b_mn_major = true;
  tn_problem.shape.output_f32 = true;
  tn_problem.shape.has_c = true;
  for (const auto& config : cuda::configs_for_m_range(tn_problem, 1, kMMax, h100)) expected.insert(config.name());

  std::set<std::string> compiled;
  for (const WarmedKernel& kernel : warmed) {
    EXPECT_TRUE(kernel.compiled) << kernel.name;
    compiled.insert(kernel.name);
  }
  EXPECT_EQ(compiled, expected);
  EXPECT_EQ(warmed.size(), expected.size());
  EXPECT_EQ(few_rows->name().rfind("fgemm_sm90_few_rows_bfloat16", 0), 0u) << few_rows->name();
}

// The m-grouped contiguous GEMMs with prefix sums, and with D packed: their own kernels, as the calls that pass
// use_psum_layout (and d_row_starts) ask for them.
TEST(Warmup, CompilesThePrefixSumsKernelsOfTheContiguousLayout) {
  const jit::TemporaryDirectory cache;
  const test::ScopedEnvironment cache_dir("FGEMM_CACHE_DIR", cache.path().c_str());
  WarmupShape psum = shape_of(GemmOperation::MGroupedBf16GemmNtContiguous, 256, 128);
  psum.use_psum_layout = true;
  WarmupShape packed = psum;
  packed.operation = GemmOperation::MGroupedFp8GemmNtContiguous;
  packed.packed_d = true;
  const auto warmed = warmup({psum, packed}, 1, 64, std::nullopt, 2);
  bool bf16_psum = false, fp8_packed = false;
  for (const WarmedKernel& kernel : warmed) {
    bf16_psum |= test::contains(kernel.name, "fgemm_sm90_bf16_contiguous_psum_nt_n256_k128_");
    fp8_packed |= test::contains(kernel.name, "fgemm_sm90_contiguous_psum_packed_d_n256_k128_");
  }
  EXPECT_TRUE(bf16_psum && fp8_packed);
}

TEST(Warmup, RefusesShapesAndRangesNoGemmTakes) {
  WarmupShape shape = shape_of(GemmOperation::Fp8GemmNt, 512, 250);
  Error error = test::thrown_error([&] { warmup({shape}, 1, 10, std::nullopt); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidValue);
  EXPECT_TRUE(test::contains(error.what(), "argument 'shapes[0].k' must be a positive multiple of 16, got 250"))
      << error.what();
  shape.k = 256;
  error = test::thrown_error([&] { warmup({shape}, 10, 9, std::nullopt); });
  EXPECT_TRUE(test::contains(error.what(), "argument 'm_max' must be in [m_min, 2^31 - 1]")) << error.what();
  error = test::thrown_error([&] { warmup({shape}, 0, 9, std::nullopt); });
  EXPECT_TRUE(test::contains(error.what(), "argument 'm_min'")) << error.what();
  shape.operation = GemmOperation::MGroupedFp8GemmNtMasked;
  shape.num_groups = 0;
  EXPECT_PRED2(test::contains, refusal_of(shape), "argument 'shapes[0].num_groups'");
  shape.operation = GemmOperation::MGroupedFp8GemmNtContiguous;
  shape.with_c = true;
  EXPECT_PRED2(test::contains, refusal_of(shape),
               "argument 'shapes[0].with_c' is for the GEMMs of the normal layout only");
  shape.operation = static_cast<GemmOperation>(17);
  shape.with_c = false;
  EXPECT_PRED2(test::contains, refusal_of(shape),
               "argument 'shapes[0].operation' is not a GemmOperation: got 17");
  shape.operation = GemmOperation::Fp16GemmNt;
  // D BF16, the default.
  EXPECT_PRED2(test::contains, refusal_of(shape), "argument 'shapes[0].d_dtype' must be float16 or float32");
  shape.d_dtype = DType::F16;
  shape.use_psum_layout = true;
  EXPECT_PRED2(test::contains, refusal_of(shape),
               "argument 'shapes[0].use_psum_layout' is for the m-grouped contiguous");
  shape.operation = GemmOperation::MGroupedFp16GemmNtContiguous;
  shape.use_psum_layout = false;
  shape.packed_d = true;
  EXPECT_PRED2(test::contains, refusal_of(shape), "argument 'shapes[0].packed_d' needs use_psum_layout");
  shape.packed_d = false;
  shape.k = 0;
  EXPECT_PRED2(test::contains, refusal_of(shape), "argument 'shapes[0].k' must be >= 1, got 0");
  error = test::thrown_error([&] { warmup({}, 1, 9, std::nullopt, -1); });
  EXPECT_TRUE(test::contains(error.what(), "argument 'threads'")) << error.what();
}

}  // namespace
}  // namespace fgemm
