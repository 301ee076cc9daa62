// fgemm::warmup without a GPU: it compiles, into the disk cache, exactly the kernels the heuristics choose
// over the M range; a second warm-up finds all of them there; bad shapes and ranges are refused by name.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "cuda/heuristics.hpp"
#include "fgemm/warmup.hpp"
#include "jit/process.hpp"
#include "test_jit_support.hpp"

namespace fgemm {
namespace {

TEST(Warmup, CompilesTheChosenKernelsOnceIntoTheDiskCache) {
  const jit::TemporaryDirectory cache;
  const test::ScopedEnvironment cache_dir("FGEMM_CACHE_DIR", cache.path().c_str());
  WarmupShape shape;
  shape.n = 512;
  shape.k = 256;
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

TEST(Warmup, RefusesShapesAndRangesNoGemmTakes) {
  WarmupShape shape;
  shape.n = 512;
  shape.k = 250;
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
  error = test::thrown_error([&] { warmup({shape}, 1, 9, std::nullopt); });
  EXPECT_TRUE(test::contains(error.what(), "argument 'shapes[0].num_groups'")) << error.what();
  shape.operation = GemmOperation::MGroupedFp8GemmNtContiguous;
  shape.with_c = true;
  error = test::thrown_error([&] { warmup({shape}, 1, 9, std::nullopt); });
  EXPECT_TRUE(test::contains(error.what(), "argument 'shapes[0].with_c' is for fp8_gemm_nt only")) << error.what();
  error = test::thrown_error([&] { warmup({}, 1, 9, std::nullopt, -1); });
  EXPECT_TRUE(test::contains(error.what(), "argument 'threads'")) << error.what();
}

}  // namespace
}  // namespace fgemm
