// The few-row kernel's host side (src/cuda/few_rows.cpp): the problems it takes from the skeleton's tiles, the K
// splits it chooses, its names; and NVRTC compiling every specialisation for sm_90a without spills, no GPU needed.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "cuda/few_rows.hpp"
#include "fgemm/few_rows_params.cuh"
#include "jit/compiler.hpp"

namespace fgemm::cuda {
namespace {

constexpr int kSms = 132;

// The normal layout's GEMM of K-major 16-bit A and B into D of their type, as the heuristics see it.
ProblemSize problem(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype = DType::BF16) {
  ProblemSize size;
  size.m = m;
  size.shape.n = n;
  size.shape.k = k;
  size.shape.ab_dtype = dtype;
  size.shape.scaling = detail::Scaling::None;
  size.shape.output_f16 = dtype == DType::F16;
  return size;
}

TEST(FewRows, TakesTheDecodeRowsOfTheSixteenBitKinds) {
  for (std::int64_t m : {1, 2, 7, 8}) {
    EXPECT_TRUE(few_rows_config(problem(m, 2112, 7168), kSms, {}).has_value()) << m;
    EXPECT_TRUE(few_rows_config(problem(m, 576, 7168, DType::F16), kSms, {}).has_value()) << m;
  }
  EXPECT_TRUE(few_rows_config(problem(1, 1001, 8), kSms, {}).has_value());
}

// D's type and C as the heuristics see them: D of the inputs' 16-bit type or FP32, a C of D's type or FP32, or FP32
// accumulated in place (the skeleton's additions to D), which the kernel reads as a C of its own.
TEST(FewRows, TakesDsTypeAndCFromTheProblem) {
  const auto plain = few_rows_config(problem(1, 2112, 7168), kSms, {});
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->d_dtype, DType::BF16);
  EXPECT_FALSE(plain->has_c);
  ProblemSize c_of_d_type = problem(4, 2112, 7168, DType::F16);
  c_of_d_type.shape.has_c = c_of_d_type.shape.c_of_d_type = true;
  const auto with_c = few_rows_config(c_of_d_type, kSms, {});
  ASSERT_TRUE(with_c.has_value());
  EXPECT_TRUE(with_c->f16_inputs);
  EXPECT_EQ(with_c->d_dtype, DType::F16);
  EXPECT_TRUE(with_c->has_c && with_c->c_of_d_type);
  ProblemSize in_place = problem(1, 2112, 7168);
  in_place.shape.output_f32 = in_place.shape.c_in_d = true;
  const auto adds = few_rows_config(in_place, kSms, {});
  ASSERT_TRUE(adds.has_value());
  EXPECT_EQ(adds->d_dtype, DType::F32);
  EXPECT_TRUE(adds->has_c);
  EXPECT_FALSE(adds->c_of_d_type);
}

TEST(FewRows, LeavesEveryOtherProblemToTheTiles) {
  std::vector<ProblemSize> others;
  others.push_back(problem(0, 2112, 7168));                          // nothing to compute
  others.push_back(problem(9, 2112, 7168));                          // more rows than an MMA's upper half
  others.push_back(problem(1, 2112, 7164));                          // K not a multiple of 8
  others.push_back(problem(1, 7168, 16384));                         // more bytes of B than kMaxBBytes
  others.push_back(problem(1, 2112, 7168, DType::E4M3));             // not 16-bit
  others.push_back(problem(1, 2112, 7168));
  others.back().shape.scaling = detail::Scaling::Block;
  others.push_back(problem(1, 2112, 7168));
  others.back().shape.b_mn_major = true;                                   // B stored [K, N]
  others.push_back(problem(1, 2112, 7168));
  others.back().shape.a_mn_major = true;                                   // A stored [K, M]
  others.push_back(problem(1, 2112, 7168));
  others.back().shape.layout = detail::GemmLayout::Masked;
  for (std::size_t i = 0; i < others.size(); ++i) EXPECT_FALSE(few_rows_config(others[i], kSms, {}).has_value()) << i;
}

TEST(FewRows, LeavesForcedConfigurationsToTheTiles) {
  BlockShape tile, split, stages;
  tile.block_m = 64;
  tile.block_n = 32;
  split.split_k = 4;  // a split of the heuristics' tile
  stages.num_stages = 4;
  for (const BlockShape& forced : {tile, split, stages})
    EXPECT_FALSE(few_rows_config(problem(1, 2112, 7168), kSms, forced).has_value());
  EXPECT_TRUE(few_rows_config(problem(1, 2112, 7168), kSms, BlockShape{}).has_value());
}

// Grids of fewer than three CTAs per SM get 16 warps a CTA where they have at least 1.5 per SM, else K is split
// between the CTAs of a cluster until they have three, while each split keeps at least one turn of the CTA's warps;
// the splits cover K in whole chunks.
TEST(FewRows, WidensOrSplitsGridsOfFewCtas) {
  struct Case {
    std::int64_t n, k;
    int warps, splits;
  };
  for (const Case& c : {Case{24576, 1536, 8, 1}, Case{4096, 7168, 8, 1}, Case{2112, 7168, 16, 1},
                        Case{1200, 7168, 8, 4}, Case{576, 7168, 8, 8}, Case{256, 7168, 8, 8}, Case{256, 1024, 8, 2},
                        Case{256, 2048, 8, 4}, Case{8, 8, 8, 1}}) {
    const auto config = few_rows_config(problem(1, c.n, c.k), kSms, {});
    ASSERT_TRUE(config.has_value()) << c.n << " x " << c.k;
    EXPECT_EQ(config->warps, c.warps) << c.n << " x " << c.k;
    EXPECT_EQ(config->splits, c.splits) << c.n << " x " << c.k;
    EXPECT_EQ(config->k_per_split % few_rows::kChunkK, 0);
    EXPECT_GE(config->k_per_split * config->splits, c.k);
    EXPECT_LT(config->k_per_split * (config->splits - 1), c.k) << "every split has some of K";
  }
}

std::vector<FewRowsConfig> every_specialisation() {
  std::vector<FewRowsConfig> configs;
  for (bool f16 : {false, true})
    for (DType d : {f16 ? DType::F16 : DType::BF16, DType::F32})
      for (int c_mode = 0; c_mode < 3; ++c_mode)
        for (const auto [warps, splits] : {std::pair{8, 1}, std::pair{16, 1}, std::pair{8, 2}, std::pair{8, 4},
                                           std::pair{8, 8}}) {
          FewRowsConfig config;
          config.warps = warps;
          config.f16_inputs = f16;
          config.d_dtype = d;
          config.has_c = c_mode > 0;
          config.c_of_d_type = c_mode == 2;
          config.splits = splits;
          if (config.c_of_d_type && d == DType::F32) continue;  // an FP32 D takes an FP32 C
          configs.push_back(config);
        }
  return configs;
}

TEST(FewRows, NamesTellTheSpecialisationsApart) {
  std::set<std::string> names;
  for (const FewRowsConfig& config : every_specialisation()) names.insert(config.name());
  EXPECT_EQ(names.size(), every_specialisation().size());
}

TEST(FewRows, EverySpecialisationCompilesWithoutSpills) {
  for (const FewRowsConfig& config : every_specialisation()) {
    const jit::CompileResult result = jit::compile(few_rows_kernel_spec(config), jit::Compiler::Nvrtc);
    EXPECT_FALSE(result.cubin.empty()) << config.name();
    EXPECT_GT(result.ptxas.registers, 0) << config.name();
    EXPECT_EQ(result.ptxas.spill_store_bytes, 0) << config.name() << "\n" << result.log;
    EXPECT_EQ(result.ptxas.spill_load_bytes, 0) << config.name() << "\n" << result.log;
    EXPECT_EQ(result.ptxas.stack_frame_bytes, 0) << config.name() << "\n" << result.log;
  }
}

}  // namespace
}  // namespace fgemm::cuda
