// The GPU backend's host-side decisions, checked on the CPU: configuration choice and tile scheduling.
#include <gtest/gtest.h>

#include <random>
#include <tuple>
#include <vector>

#include "cuda/cost_model.hpp"
#include "cuda/gemm_sm90.hpp"
#include "cuda/heuristics.hpp"
#include "cuda/kernel_source.hpp"
#include "fgemm/error.hpp"

#include "fgemm/sm90/row_blocks_plan.cuh"
#include "fgemm/sm90/scheduler.cuh"

namespace fgemm::cuda {
namespace {

ProblemSize problem(std::int64_t m, std::int64_t n, std::int64_t k, bool f32 = false) {
  ProblemSize size;
  size.m = m;
  size.shape.n = n;
  size.shape.k = k;
  size.shape.output_f32 = f32;
  return size;
}

TEST(Heuristics, EveryCandidateFitsSharedMemoryAndTheKernelLimits) {
  const DeviceLimits device;
  for (bool f32 : {false, true}) {
    const auto configs = candidate_configs(problem(4096, 7168, 2048, f32), device);
    ASSERT_FALSE(configs.empty());
    for (const auto& config : configs) {
      EXPECT_LE(config.smem_bytes(), device.max_smem_per_block) << config.name();
      EXPECT_GE(config.num_stages, 2) << config.name();
      EXPECT_EQ(config.warpgroup_n() % 8, 0) << config.name();
      EXPECT_LE(config.warpgroup_n(), 256) << config.name();
      EXPECT_EQ(config.warpgroup_n() * config.output_bytes % 16, 0) << config.name();
    }
  }
}

TEST(Heuristics, ChoiceIsDeterministicAndLaunchesWholeClustersNoMoreThanTheWork) {
  const DeviceLimits device;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const auto size = problem(1 + rng() % 8192, 16 + rng() % 20000, 16 * (1 + rng() % 1024));
    const KernelConfig first = choose_config(size, device);
    const KernelConfig second = choose_config(size, device);
    EXPECT_EQ(first.name(), second.name());
    const std::int64_t m_blocks = (size.m + first.block_m - 1) / first.block_m;
    const std::int64_t n_blocks = (size.shape.n + first.block_n - 1) / first.block_n;
    const std::int64_t cluster_tiles =
        (m_blocks + first.cluster_m - 1) / first.cluster_m * ((n_blocks + first.cluster_n - 1) / first.cluster_n);
    EXPECT_GE(first.num_sms, first.cluster_size());
    EXPECT_EQ(first.num_sms % first.cluster_size(), 0);
    EXPECT_LE(first.num_sms, std::min<std::int64_t>(cluster_tiles * first.cluster_size(), device.num_sms));
  }
}

TEST(Heuristics, SmallMFillsTheMachineAndLargeMUsesLargeTiles) {
  const DeviceLimits device;
  // M = 64, N = 2112: a 16-column tile gives exactly one tile per SM.
  const KernelConfig small = choose_config(problem(64, 2112, 7168), device);
  EXPECT_EQ(small.block_m, 64);
  EXPECT_GE(small.num_sms, 120);
  const KernelConfig large = choose_config(problem(4096, 7168, 7168), device);
  EXPECT_GE(large.block_m * large.block_n, 128 * 112) << large.name();
}

// In decode the DRAM bounds every candidate, and the model's ties go to the tile whose waves keep the most SMs
// busy; where many waves keep nearly all of them busy, to the larger tile.
TEST(Heuristics, DecodeTiesKeepTheSmsBusyThenTakeTheLargerTile) {
  const DeviceLimits device;
  // 64 x 192 tiles keep 128 of 132 SMs busy (M = 128: 256 CTAs of two waves' 264), 64 x 256 tiles 96 (192).
  for (std::int64_t m : {1, 64, 128}) {
    const KernelConfig config = choose_config(problem(m, 24576, 1536), device);
    EXPECT_EQ(config.block_m, 64) << config.name();
    EXPECT_EQ(config.block_n, 192) << config.name();
  }
  // 1 x 129280: 64 x 256 tiles keep 96% of the SMs busy over four waves; narrower ones no more than 4% more.
  const KernelConfig wide = choose_config(problem(1, 129280, 7168), device);
  EXPECT_EQ(wide.block_n, 256) << wide.name();
  // Outside the decode regime the larger tile wins ties as before: 4096 x 24576 keeps its 128-row tiles.
  const KernelConfig large = choose_config(problem(4096, 24576, 1536), device);
  EXPECT_GE(large.block_m, 128) << large.name();
}

// 128 x 256 tiles (two column halves per warpgroup, wgmma N = 128) are chosen for large problems only, and
// can be forced on any problem with BF16 output and no C.
TEST(Heuristics, ColumnHalvesForLargeProblemsOnly) {
  const DeviceLimits device;
  const KernelConfig large = choose_config(problem(4096, 4096, 7168), device);
  EXPECT_EQ(large.block_m, 128) << large.name();
  EXPECT_EQ(large.block_n, 256) << large.name();
  EXPECT_EQ(large.column_halves(), 2);
  EXPECT_EQ(large.mma_n(), 128);
  EXPECT_FALSE(large.two_partials());
  for (const auto& size : {problem(128, 32768, 7168), problem(4096, 32768, 512), problem(4096, 4096, 7168, true)})
    EXPECT_NE(choose_config(size, device).column_halves(), 2) << choose_config(size, device).name();
  const KernelConfig forced = choose_config(problem(1, 264, 256), device, BlockShape{128, 256, 1, 1});
  EXPECT_EQ(forced.block_n, 256);
  EXPECT_THROW(choose_config(problem(1, 264, 256, true), device, BlockShape{128, 256, 1, 1}), Error);
  const std::string source = gemm_kernel_source(large);
  EXPECT_NE(source.find("m64n128k32.f32.e4m3.e4m3"), std::string::npos);
}

// 128 x 256 tiles take a fourth stage (and stage D one column half at a time) where each SM runs a few tiles
// only, three stages (D staged whole) where it runs many.
TEST(Heuristics, FourStagesOfColumnHalvesForFewWavesOnly) {
  const DeviceLimits device;
  ProblemSize masked = problem(256, 7168, 2048);
  masked.num_groups = 4;
  masked.shape.layout = detail::GemmLayout::Masked;
  ProblemSize contiguous = problem(32768, 4096, 7168);
  contiguous.shape.layout = detail::GemmLayout::Contiguous;
  for (const auto& [size, stages] : {std::pair{masked, 4}, std::pair{problem(4096, 4096, 7168), 4},
                                     std::pair{problem(4096, 7168, 16384), 3}, std::pair{contiguous, 3}}) {
    const KernelConfig config = choose_config(size, device);
    EXPECT_EQ(config.column_halves(), 2) << config.name();
    EXPECT_EQ(config.num_stages, stages) << config.name();
    EXPECT_EQ(config.staging_passes(), stages == 4 ? 2 : 1) << config.name();
    EXPECT_LE(config.smem_bytes(), device.max_smem_per_block) << config.name();
  }
}

ProblemSize sixteen_bit(std::int64_t m, std::int64_t n, std::int64_t k, bool f32 = false) {
  ProblemSize size = problem(m, n, k, f32);
  size.shape.ab_dtype = DType::BF16;
  size.shape.scaling = detail::Scaling::None;
  return size;
}

// The 16-bit kinds' FP32 D in one wave of tiles of at most four stages is staged one column half at a time where that
// frees a fifth (on an H200, 576 x 4096 x 7168 TN in place: 54.5 -> 48.5 us); not in many waves, not where the tile
// has more stages already, not where a half's rows would be stored 32 bytes at a time, and not for FP8's 1D1D tiles.
TEST(Heuristics, OneWaveOfSixteenBitFp32TilesStagesInHalvesForAFifthStage) {
  const DeviceLimits device;
  ProblemSize weight_gradient = sixteen_bit(576, 4096, 7168, true);
  weight_gradient.shape.a_mn_major = weight_gradient.shape.b_mn_major = true;
  weight_gradient.shape.c_in_d = true;
  const KernelConfig halved = choose_config(weight_gradient, device);
  EXPECT_EQ(halved.block_m * halved.block_n, 192 * 96) << halved.name();
  EXPECT_TRUE(halved.staged_in_halves) << halved.name();
  EXPECT_EQ(halved.staging_passes(), 2) << halved.name();
  EXPECT_EQ(halved.num_stages, 5) << halved.name();
  EXPECT_LE(halved.smem_bytes(), device.max_smem_per_block) << halved.name();
  EXPECT_NE(halved.name().find("_halves"), std::string::npos) << halved.name();
  EXPECT_NE(gemm_kernel_source(halved).find("true};"), std::string::npos);
  ProblemSize whole = weight_gradient;
  whole.shape.output_f32 = whole.shape.c_in_d = false;  // BF16 D leaves room for a fifth stage staged whole
  const KernelConfig bf16 = choose_config(whole, device);
  EXPECT_FALSE(bf16.staged_in_halves) << bf16.name();
  EXPECT_EQ(bf16.num_stages, 5) << bf16.name();
  ProblemSize many_waves = weight_gradient;
  many_waves.m = 4096;
  EXPECT_FALSE(choose_config(many_waves, device, BlockShape{192, 96, 1, 1}).staged_in_halves);
  EXPECT_FALSE(choose_config(sixteen_bit(300, 4096, 776, true), device).staged_in_halves);  // 64 x 160, 6 stages
  EXPECT_FALSE(choose_config(sixteen_bit(1500, 1536, 1408, true), device).staged_in_halves);  // 128 x 144: 32 B
  ProblemSize row_blocks = problem(576, 4096, 7168, true);
  row_blocks.shape.scaling = detail::Scaling::RowBlocks;
  row_blocks.shape.c_in_d = true;
  EXPECT_FALSE(choose_config(row_blocks, device).staged_in_halves);
}

// Split-K: each split an equal share of at least two K blocks, only in the normal and masked layouts, never with
// multicast. The heuristics choose it for the 16-bit kinds' shapes of few tiles, in two, four or eight, whose
// clusters all run at once (eight-way ones on at most half the SMs); FP8's only when forced, and a forced tile
// stays whole.
TEST(Heuristics, SplitKWhereFewTilesLeaveTheSmsIdle) {
  const DeviceLimits device;
  for (std::int64_t m : {1, 64, 128}) EXPECT_EQ(choose_config(problem(m, 2112, 7168), device).split_k, 1);
  for (std::int64_t m : {1, 128}) {
    for (std::int64_t n : {256, 576}) {
      const KernelConfig split = choose_config(sixteen_bit(m, n, 7168, n == 256), device);
      EXPECT_TRUE(split.split_k == 2 || split.split_k == 4 || split.split_k == 8) << split.name();
      const std::int64_t ctas = cluster_tiles(sixteen_bit(m, n, 7168), split) * split.split_k;
      EXPECT_LE(ctas, split.split_k == 8 ? device.num_sms / 2 : 118) << split.name();
      EXPECT_EQ(choose_config(problem(m, n, 7168), device).split_k, 1);
      EXPECT_EQ(choose_config(sixteen_bit(m, n, 7168), device, BlockShape{64, 32}).split_k, 1);
    }
  }
  for (auto [m, n, k] : {std::tuple{1, 2112, 7168}, {128, 2112, 7168}, {1, 7168, 16384}, {4096, 7168, 2048}})
    EXPECT_EQ(choose_config(sixteen_bit(m, n, k), device).split_k, 1) << m << "x" << n << "x" << k;
  // 128 x 256 x 7168 into FP32 ran fastest split eight ways in 64 x 64 tiles, 64 CTAs; 128 x 576 x 7168, whose
  // eight-way splits took 96 CTAs and ran slower than its four-way ones, splits in four (docs/PERFORMANCE.md).
  const KernelConfig eight_way = choose_config(sixteen_bit(128, 256, 7168, true), device);
  EXPECT_EQ(eight_way.split_k, 8) << eight_way.name();
  EXPECT_EQ(eight_way.block_n, 64) << eight_way.name();
  EXPECT_EQ(choose_config(sixteen_bit(128, 576, 7168), device).split_k, 4);
  for (DType dtype : {DType::E4M3, DType::BF16}) {
    for (auto layout : {detail::GemmLayout::Normal, detail::GemmLayout::Masked, detail::GemmLayout::Contiguous}) {
      ProblemSize size = problem(64, 2112, 7168);
      size.shape.ab_dtype = dtype;
      size.shape.scaling = dtype == DType::E4M3 ? detail::Scaling::Block : detail::Scaling::None;
      size.shape.layout = layout;
      for (const auto& config : candidate_configs(size, device, true)) EXPECT_EQ(config.split_k, 1);
      int splits = 0;
      for (const auto& config : candidate_configs(size, device, true, true)) {
        if (config.split_k == 1) continue;
        ++splits;
        EXPECT_EQ(config.multicast_size(), 1) << config.name();
        const int k_blocks = 7168 / config.block_k();
        EXPECT_EQ(k_blocks % config.split_k, 0) << config.name();
        EXPECT_GE(k_blocks / config.split_k, 2) << config.name();
        EXPECT_LE(config.smem_bytes(), device.max_smem_per_block) << config.name();
      }
      EXPECT_EQ(splits > 0, layout != detail::GemmLayout::Contiguous);
    }
  }
  const KernelConfig forced = choose_config(problem(4096, 7168, 2048), device, BlockShape{64, 128, 0, 0, 4});
  EXPECT_EQ(forced.split_k, 4);
  EXPECT_EQ(forced.cluster_size(), 4);
  const KernelConfig split_only = choose_config(problem(64, 2112, 7168), device, BlockShape{0, 0, 0, 0, 8});
  EXPECT_EQ(split_only.split_k, 8);
  EXPECT_EQ(split_only.num_sms % 8, 0);
  EXPECT_THROW(choose_config(problem(64, 2112, 1024), device, BlockShape{64, 128, 0, 0, 8}), Error);
}

// A problem of fewer rows than a tile loads the fewest of 8, 16 or 32 rows of A that hold them, in the normal
// layout with A K-major and not multicast; every other candidate loads whole tiles.
TEST(Heuristics, FewerRowsThanATileLoadOnlyThoseOfA) {
  const DeviceLimits device;
  for (bool fp8 : {true, false}) {
    for (std::int64_t m : {1, 7, 8, 9, 16, 17, 32, 33, 64, 100}) {
      const ProblemSize size = fp8 ? problem(m, 2112, 7168) : sixteen_bit(m, 2112, 7168);
      for (const auto& config : candidate_configs(size, device, true, true)) {
        const int expected = config.cluster_n > 1 ? 0 : m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : 0;
        EXPECT_EQ(config.a_rows, expected < config.block_m ? expected : 0) << m << " " << config.name();
      }
    }
  }
  ProblemSize masked = sixteen_bit(1, 2112, 7168);
  masked.shape.layout = detail::GemmLayout::Masked;
  ProblemSize a_mn_major = sixteen_bit(1, 2112, 7168);
  a_mn_major.shape.a_mn_major = true;
  for (const ProblemSize& size : {masked, a_mn_major})
    for (const auto& config : candidate_configs(size, device, true, true)) EXPECT_EQ(config.a_rows, 0) << config.name();
}

// In the block recipe's decode regime (FP8 and INT8) a chosen 64-row tile of at most 64 columns has its math
// warpgroups take alternate K blocks where the K blocks and its stages are multiples of four, with no cluster, split
// or ring of C. Its shared memory holds one warpgroup's epilogue memory for the whole tile, and the other
// warpgroup's FP32 sums. The 16-bit kinds' decode tiles alternate up to 32 columns and from 32 K blocks; INT8's
// exact INT32 sums never.
TEST(Heuristics, DecodeTilesAlternateKBlocksWhereTheyCan) {
  const DeviceLimits device;
  const auto int8 = [](ProblemSize size, detail::Scaling scaling) {
    size.shape.ab_dtype = DType::I8;
    size.shape.scaling = scaling;
    return size;
  };
  for (std::int64_t m : {1, 33, 64, 128}) {
    for (auto [n, k] : {std::pair{2112, 7168}, std::pair{4096, 7168}, std::pair{7168, 2048}}) {
      for (const ProblemSize& size : {problem(m, n, k), int8(problem(m, n, k), detail::Scaling::Block)}) {
        const KernelConfig config = choose_config(size, device);
        ASSERT_EQ(config.block_m, 64) << config.name();
        EXPECT_EQ(config.alternate_k_blocks, config.block_n <= 64) << config.name();
        if (!config.alternate_k_blocks) continue;
        EXPECT_EQ(config.num_stages % 4, 0) << config.name();
        EXPECT_EQ(config.warpgroup_n(), config.block_n) << config.name();
        KernelConfig split_columns = config;
        split_columns.alternate_k_blocks = false;
        EXPECT_EQ(config.epilogue_bytes_per_warpgroup(), 2 * split_columns.epilogue_bytes_per_warpgroup());
        EXPECT_EQ(config.smem_bytes() - split_columns.smem_bytes(), 64 * config.block_n * 4) << config.name();
        EXPECT_NE(config.name().find("_alt"), std::string::npos);
      }
      EXPECT_FALSE(choose_config(int8(problem(m, n, k, true), detail::Scaling::None), device).alternate_k_blocks);
    }
  }
  EXPECT_TRUE(choose_config(int8(problem(64, 2112, 7168), detail::Scaling::Block), device).alternate_k_blocks);
  ProblemSize with_c = problem(64, 2112, 7168, true);
  with_c.shape.has_c = true;
  ProblemSize in_place = problem(64, 2112, 7168, true);
  in_place.shape.c_in_d = true;
  EXPECT_FALSE(choose_config(with_c, device).alternate_k_blocks);
  EXPECT_TRUE(choose_config(in_place, device).alternate_k_blocks);
  EXPECT_FALSE(choose_config(problem(64, 2112, 7168 - 128), device).alternate_k_blocks);  // 55 K blocks
  EXPECT_FALSE(choose_config(problem(129, 2112, 7168), device).alternate_k_blocks);
  for (std::int64_t m : {1, 64, 128}) {
    const ProblemSize size = sixteen_bit(m, 4096, 7168);
    EXPECT_TRUE(choose_config(size, device, BlockShape{64, 32}).alternate_k_blocks);
    EXPECT_TRUE(choose_config(size, device, BlockShape{64, 16}).alternate_k_blocks);
    EXPECT_FALSE(choose_config(size, device, BlockShape{64, 48}).alternate_k_blocks);
    EXPECT_FALSE(choose_config(size, device, BlockShape{64, 64}).alternate_k_blocks);
    EXPECT_FALSE(choose_config(size, device, BlockShape{64, 32, 0, 0, 2}).alternate_k_blocks);
  }
  EXPECT_TRUE(choose_config(sixteen_bit(64, 4096, 2048), device, BlockShape{64, 32}).alternate_k_blocks);
  EXPECT_FALSE(choose_config(sixteen_bit(64, 4096, 1984), device, BlockShape{64, 32}).alternate_k_blocks);
  const KernelConfig sixteen_bit_decode = choose_config(sixteen_bit(128, 2112, 7168), device);
  EXPECT_TRUE(sixteen_bit_decode.alternate_k_blocks) << sixteen_bit_decode.name();
  EXPECT_EQ(sixteen_bit_decode.num_stages % 4, 0) << sixteen_bit_decode.name();
  EXPECT_FALSE(choose_config(sixteen_bit(129, 4096, 7168), device, BlockShape{64, 32}).alternate_k_blocks);
}

// A forced stage count, for measuring, replaces the chosen kernel's where it fits: at least four, at most the most
// that fit, a multiple of four where the warpgroups take alternate K blocks; on the heuristics' tile or a forced one.
TEST(Heuristics, ForcedStagesWhereTheyFit) {
  const DeviceLimits device;
  const ProblemSize decode = sixteen_bit(1, 2112, 7168);
  const KernelConfig alternating = choose_config(decode, device, BlockShape{64, 16});
  ASSERT_TRUE(alternating.alternate_k_blocks);
  for (int stages : {4, 8, 12}) {
    const KernelConfig forced = choose_config(decode, device, BlockShape{64, 16, 0, 0, 0, 0, stages});
    EXPECT_EQ(forced.num_stages, stages);
    EXPECT_TRUE(forced.alternate_k_blocks);
    EXPECT_EQ(forced.block_n, 16);
  }
  for (int stages : {3, 10, alternating.num_stages + 4})
    EXPECT_THROW(choose_config(decode, device, BlockShape{64, 16, 0, 0, 0, 0, stages}), Error) << stages;

  const ProblemSize large = sixteen_bit(4096, 2112, 7168);
  const KernelConfig chosen = choose_config(large, device);
  ASSERT_GT(chosen.num_stages, 4) << chosen.name();
  KernelConfig fewer = choose_config(large, device, BlockShape{0, 0, 0, 0, 0, 0, chosen.num_stages - 1});
  EXPECT_EQ(fewer.num_stages, chosen.num_stages - 1);
  fewer.num_stages = chosen.num_stages;
  EXPECT_EQ(fewer.name(), chosen.name());
  EXPECT_THROW(choose_config(large, device, BlockShape{0, 0, 0, 0, 0, 0, chosen.num_stages + 1}), Error);
  try {
    choose_config(decode, device, BlockShape{64, 16, 0, 0, 0, 0, 10});
    ADD_FAILURE() << "ten stages of an alternating tile were taken";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("forced stages (10)"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("a multiple of 4"), std::string::npos) << error.what();
  }
}

// A ring of C takes shared memory from the stages: where a K block is short (128 x 144 and 128 x 176 tiles of
// 7168 K), the heuristics keep the four stages that cover a load's latency. Beside them, in the memory that D's
// staging shares with it, the ring holds at least half of C's chunks, so that the epilogue waits for one round of
// refills at most. A forced ring is the one run, if the tile has it, and an error naming it otherwise.
TEST(Heuristics, ARingOfCLeavesTheKLoopStagesToCoverItsLoads) {
  const DeviceLimits device;
  for (std::int64_t n : {576, 2112}) {
    ProblemSize size = sixteen_bit(4096, n, 7168);
    size.shape.has_c = true;
    const KernelConfig chosen = choose_config(size, device);
    EXPECT_GE(chosen.num_stages, 4) << chosen.name();
    EXPECT_GE(2 * chosen.c_slots, chosen.c_chunks()) << chosen.name();
    for (const auto& config : candidate_configs(size, device, false, false)) {
      if (config.block_m != 128 || config.block_n != 144) continue;
      const KernelConfig forced = choose_config(size, device, BlockShape{128, 144, 0, 0, 0, config.c_slots});
      EXPECT_EQ(forced.c_slots, config.c_slots);
      EXPECT_EQ(forced.num_stages, config.num_stages);
    }
  }
  ProblemSize size = sixteen_bit(4096, 576, 7168);
  size.shape.has_c = true;
  try {
    choose_config(size, device, BlockShape{128, 144, 0, 0, 0, 6});
    ADD_FAILURE() << "a ring of six chunks, which 128 x 144 tiles do not have, was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidValue);
    EXPECT_NE(std::string(error.what()).find("ring of C 6"), std::string::npos) << error.what();
  }
}

// D's staging and C's ring share each warpgroup's epilogue memory: a kernel takes the larger of the two, not their
// sum, and stages D whole where the ring would hold it. The rings offered for a tile each gain a round of refills
// over every smaller one, and give up a stage for it, down to four stages where any tile keeps four: for 128 x 256
// tiles (eight FP32 chunks per warpgroup) the smallest ring of each round count, of which two chunks alone keep
// four stages; a C of D's 16-bit type has half the chunks, and a ring of all four would leave three stages.
TEST(Heuristics, DsStagingAndCsRingShareTheirMemory) {
  sm90::TileConfig tile;
  tile.block_m = 128;
  tile.block_n = 256;
  tile.num_stages = 3;
  tile.operand_bytes = 2;
  const int without_c = tile.smem_bytes(0);
  EXPECT_EQ(tile.staging_passes(), 1);
  tile.c_slots = 8;  // 64 KB a warpgroup, more than its 32 KB of BF16 staging
  EXPECT_EQ(tile.staging_passes(), 1);
  EXPECT_EQ(tile.smem_bytes(0), without_c + 2 * (8 * sm90::TileConfig::kCChunkBytes - 64 * 256 * 2) + 2 * 8 * 8);
  tile.c_slots = 2;  // 16 KB: D is staged in two column halves of 16 KB
  EXPECT_EQ(tile.staging_passes(), 2);
  EXPECT_EQ(tile.epilogue_bytes_per_warpgroup(), 2 * sm90::TileConfig::kCChunkBytes);

  const DeviceLimits device;
  for (bool c_of_d_type : {false, true}) {
    ProblemSize size = sixteen_bit(4096, 7168, 2048);
    size.shape.has_c = true;
    size.shape.c_of_d_type = c_of_d_type;
    std::vector<int> rings;
    for (const auto& config : candidate_configs(size, device)) {
      EXPECT_GE(config.num_stages, 4) << config.name();
      if (config.block_m == 128 && config.block_n == 256) rings.push_back(config.c_slots);
    }
    EXPECT_EQ(rings, (std::vector<int>{2})) << "C of D's type: " << c_of_d_type;
    // Four stages of 128 x 256 fit beside a ring of two chunks, not of four.
    tile.c_slots = 4;
    tile.c_bytes = c_of_d_type ? 2 : 4;
    tile.num_stages = 4;
    EXPECT_GT(tile.smem_bytes(0), device.max_smem_per_block);
    tile.c_slots = 2;
    EXPECT_LE(tile.smem_bytes(0), device.max_smem_per_block);
    // A forced ring is built with however many stages fit beside it, for measuring.
    const KernelConfig forced = choose_config(size, device, BlockShape{128, 256, 0, 0, 0, 4});
    EXPECT_EQ(forced.c_slots, 4);
    EXPECT_EQ(forced.num_stages, 3) << forced.name();
  }
}

// FP8's 1D1D recipe accumulating in place into an FP32 D (a weight gradient into its main_grad), scales by the TMA.
ProblemSize in_place_weight_gradient(std::int64_t m, std::int64_t n, std::int64_t k) {
  ProblemSize size = problem(m, n, k, true);
  size.shape.scaling = detail::Scaling::RowBlocks;
  size.shape.sfa_by_tma = true;
  size.shape.c_in_d = true;
  return size;
}

// The 1D1D recipe's weight gradient accumulating in place into FP32: where K is short, D's reads and writes keep
// the DRAM busy and loads wait longer, and the heuristics take narrower warpgroups with more stages loading ahead
// (on an H100, 7168 x 4096 x 2048 ran 12% faster in 128 x 96 tiles with six stages than in 128 x 128 with four; on
// an H200, 192 x 96 tiles with four stages, three of them loading, as fast as 128 x 96 with six); where K is long,
// 128 x 128. Each warpgroup adds whole 128-byte lines of D.
TEST(Heuristics, WeightGradientsInPlaceTakeMoreStagesWhereKIsShort) {
  const DeviceLimits device;
  const auto weight_gradient = [](std::int64_t k) { return in_place_weight_gradient(7168, 4096, k); };
  // Two partials give a stage back one K block late, one partial (three math warpgroups) at once.
  const auto loading_stages = [](const KernelConfig& c) { return c.num_stages - (c.two_partials() ? 2 : 1); };
  const KernelConfig short_k = choose_config(weight_gradient(2048), device);
  EXPECT_LT(short_k.warpgroup_n(), 128) << short_k.name();
  EXPECT_GE(loading_stages(short_k), 3) << short_k.name();
  const KernelConfig long_k = choose_config(weight_gradient(16384), device);
  EXPECT_EQ(long_k.block_m * long_k.block_n, 128 * 128) << long_k.name();
  EXPECT_LT(loading_stages(long_k), loading_stages(short_k)) << long_k.name();
  for (std::int64_t k : {512, 2048, 16384})
    for (const auto& config : candidate_configs(weight_gradient(k), device))
      EXPECT_EQ(config.warpgroup_n() * config.output_bytes % 128, 0) << config.name();
}

// The 1D1D recipe's tiles of three math warpgroups (one partial accumulator each): chosen where 192 rows divide M
// better than 128 (on an H200, 576 x 4096 x 7168 in place: 38.4 µs in 192 x 96 tiles, 49.9 in the two-warpgroup
// tile chosen before) and for the k-grouped weight gradient of experts, whose tiles have few K blocks each (on an
// H100, 4096 x 7168 of 4 and 8 experts: 2024 and 2192 µs in 192 x 128 tiles of three stages, 2116 and 2343 in
// 128 x 128; of 16, 2575-2580 in 192 x 96 or 192 x 128, 2772 in 128 x 128); never on long K.
TEST(Heuristics, WeightGradientsTakeThreeMathWarpgroupsWhereTheyWin) {
  const DeviceLimits device;
  const KernelConfig small_m = choose_config(in_place_weight_gradient(576, 4096, 7168), device);
  EXPECT_EQ(small_m.block_m, 192) << small_m.name();
  EXPECT_FALSE(small_m.two_partials()) << small_m.name();
  EXPECT_EQ(choose_config(in_place_weight_gradient(7168, 4096, 16384), device).block_m, 128);
  ProblemSize experts = in_place_weight_gradient(4096, 7168, 0);
  experts.shape.layout = detail::GemmLayout::KGrouped;
  for (int groups : {4, 8, 16}) {
    experts.num_groups = groups;
    experts.k_per_group = 34432 / groups;
    const KernelConfig chosen = choose_config(experts, device);
    EXPECT_EQ(chosen.block_m, 192) << chosen.name();
    if (groups < 16) EXPECT_EQ(chosen.block_n, 128) << chosen.name();
  }
  for (const auto& config : candidate_configs(experts, device))
    EXPECT_LE(config.warpgroup_n(), sm90::row_blocks::kMaxWarpgroupN) << config.name();
}

// INT8's block recipe takes FP8's tilings where its registers allow: at M = 4096 the tiles of the seed shapes
// (192 x 128 and 128 x 256, on an H100 the fastest forced tiles of both kinds), in the normal and the grouped
// layouts; at M = 64 or 128 FP8's narrow tiles with all the stages that fit up to 64 columns a warpgroup (outside
// the masked layout), whether the TMA or the helper warp loads sfa, four stages beyond.
TEST(Heuristics, Int8BlockRecipeTakesFp8sTilesWhereItsRegistersAllow) {
  const DeviceLimits device;
  const std::pair<std::int64_t, std::int64_t> seed_nk[] = {{2112, 7168}, {24576, 1536}, {32768, 512},
                                                          {7168, 16384}, {4096, 7168},  {7168, 2048}};
  for (bool sfa_by_tma : {true, false}) {
    for (std::int64_t m : {64, 128, 4096}) {
      for (auto [n, k] : seed_nk) {
        ProblemSize fp8 = problem(m, n, k);
        fp8.shape.sfa_by_tma = sfa_by_tma;
        ProblemSize int8 = fp8;
        int8.shape.ab_dtype = DType::I8;
        const KernelConfig fp8_choice = choose_config(fp8, device), int8_choice = choose_config(int8, device);
        if (m == 4096) {
          EXPECT_EQ(int8_choice.block_m, fp8_choice.block_m) << int8_choice.name() << " " << fp8_choice.name();
          EXPECT_EQ(int8_choice.block_n, fp8_choice.block_n) << int8_choice.name() << " " << fp8_choice.name();
        }
        if (int8_choice.warpgroup_n() <= 64)
          EXPECT_EQ(int8_choice.num_stages, most_stages(int8_choice, device)) << int8_choice.name();
        else
          EXPECT_LE(int8_choice.num_stages, 4) << int8_choice.name();
      }
    }
  }
  // The grouped layouts: FP8's 128 x 256 tiles at the seed shapes, but never three math warpgroups of more than
  // 96 columns in the masked layout, nor of more than 64 there beside a ring of C (they spilled).
  for (auto layout : {detail::GemmLayout::Contiguous, detail::GemmLayout::Masked}) {
    ProblemSize fp8 = problem(layout == detail::GemmLayout::Masked ? 256 : 32768, 4096, 7168);
    fp8.num_groups = 4;
    fp8.shape.layout = layout;
    fp8.shape.sfa_by_tma = true;
    ProblemSize int8 = fp8;
    int8.shape.ab_dtype = DType::I8;
    const KernelConfig fp8_choice = choose_config(fp8, device), int8_choice = choose_config(int8, device);
    EXPECT_EQ(int8_choice.block_m, fp8_choice.block_m) << int8_choice.name() << " " << fp8_choice.name();
    EXPECT_EQ(int8_choice.block_n, fp8_choice.block_n) << int8_choice.name() << " " << fp8_choice.name();
    if (layout != detail::GemmLayout::Masked) continue;
    for (bool with_c : {false, true}) {
      int8.shape.has_c = with_c;
      for (const auto& config : candidate_configs(int8, device))
        if (config.num_math_warpgroups() == 3) EXPECT_LE(config.warpgroup_n(), with_c ? 64 : 96) << config.name();
    }
  }
}

TEST(Heuristics, HonoursTheSmCount) {
  DeviceLimits device;
  device.num_sms = 20;
  EXPECT_LE(choose_config(problem(4096, 4096, 4096), device).num_sms, 20);
}

TEST(Heuristics, DramBandwidthComesFromTheDevicesClocks) {
  driver::DeviceProperties h100, h200, silent;
  h100.clock_khz = h200.clock_khz = 1980000;
  h100.memory_clock_khz = 2619000;
  h100.memory_bus_width_bits = 5120;
  h200.memory_clock_khz = 3201000;
  h200.memory_bus_width_bits = 6016;
  EXPECT_NEAR(dram_bytes_per_cycle_of(h100), 1693, 1);
  EXPECT_NEAR(dram_bytes_per_cycle_of(h200), 2431, 1);
  EXPECT_EQ(dram_bytes_per_cycle_of(silent), 0);
}

// With an H200's DRAM figure the 16-bit model no longer ties every decode tile at the DRAM bound: 1 x 7168 x 16384
// BF16 takes 64 x 96 tiles (75 CTAs busy) rather than 64 x 176 (41), 1.15x faster on an H200. FP8's model keeps
// the fitted figure, whose ties its decode regime is tuned on (128 x 24576 x 1536 ran 1.18x slower without them).
// On an H200, 64 x 16 tiles fill all 132 SMs on 1 x 2112 x 7168, but each K block's chain bounds them: split
// four, 64 x 80 tiles ran 1.25x faster. 1 x 4096 x 7168 fills them with 64 x 32 tiles, and stays unsplit; so does
// every shape on the fitted H100 figure (SplitKWhereFewTilesLeaveTheSmsIdle).
TEST(Heuristics, ChainBoundDecodeTilesSplitWhereDramOutpacesTheFit) {
  DeviceLimits h200;
  h200.dram_bytes_per_cycle = 2431;
  for (std::int64_t n : {2112, 4096}) {
    ProblemSize size = problem(1, n, 7168);
    size.shape.ab_dtype = DType::BF16;
    size.shape.scaling = detail::Scaling::None;
    const KernelConfig config = choose_config(size, h200);
    EXPECT_EQ(config.split_k, n == 2112 ? 4 : 1) << config.name();
  }
}

// The choices measured fastest on an H200 (docs/PERFORMANCE.md, "Eight-way splits" and "Alternate K blocks in the
// 16-bit decode tiles"): 1 x 256 x 7168 into FP32 split eight in 64 x 32 tiles (64 CTAs); 1 x 576 x 7168 split
// eight on at most half the SMs; 128 x 576 x 7168, whose eight-way grids took 96 CTAs, split four; 128 x 2112 x 7168
// unsplit in 64 x 32 tiles whose warpgroups alternate K blocks, as 1 x 4096 x 7168's.
TEST(Heuristics, SixteenBitDecodeChoicesOnAnH200) {
  DeviceLimits h200;
  h200.dram_bytes_per_cycle = 2431;
  const auto bf16 = [](std::int64_t m, std::int64_t n, bool f32) {
    ProblemSize size = problem(m, n, 7168, f32);
    size.shape.ab_dtype = DType::BF16;
    size.shape.scaling = detail::Scaling::None;
    return size;
  };
  const KernelConfig narrow = choose_config(bf16(1, 256, true), h200);
  EXPECT_EQ(narrow.split_k, 8) << narrow.name();
  EXPECT_EQ(narrow.block_n, 32) << narrow.name();
  const KernelConfig wide = choose_config(bf16(1, 576, false), h200);
  EXPECT_EQ(wide.split_k, 8) << wide.name();
  EXPECT_LE(cluster_tiles(bf16(1, 576, false), wide) * 8, h200.num_sms / 2) << wide.name();
  EXPECT_EQ(choose_config(bf16(128, 576, false), h200).split_k, 4);
  for (auto [m, n] : {std::pair{128, 2112}, std::pair{1, 4096}}) {
    const KernelConfig config = choose_config(bf16(m, n, false), h200);
    EXPECT_EQ(config.split_k, 1) << config.name();
    EXPECT_EQ(config.block_n, 32) << config.name();
    EXPECT_TRUE(config.alternate_k_blocks) << config.name();
  }
}

TEST(Heuristics, FasterDramRanksTheSixteenBitDecodeTilesOnly) {
  DeviceLimits h100, h200;
  h200.dram_bytes_per_cycle = 2431;
  ProblemSize bf16 = problem(1, 7168, 16384);
  bf16.shape.ab_dtype = DType::BF16;
  bf16.shape.scaling = detail::Scaling::None;
  EXPECT_EQ(choose_config(bf16, h100).block_n, 176);
  EXPECT_EQ(choose_config(bf16, h200).block_n, 96);
  ProblemSize fp8 = problem(128, 24576, 1536);
  fp8.shape.sfa_by_tma = true;
  EXPECT_EQ(choose_config(fp8, h100).name(), choose_config(fp8, h200).name());
}

TEST(KernelSource, NamesTheConfigurationAndItsWgmmaShape) {
  KernelConfig config;
  config.shape.n = 2112;
  config.shape.k = 7168;
  config.block_m = 64;
  config.block_n = 48;
  const std::string source = gemm_kernel_source(config);
  EXPECT_NE(source.find("m64n24k32.f32.e4m3.e4m3"), std::string::npos);
  EXPECT_NE(source.find(kGemmKernelSymbol), std::string::npos);
  EXPECT_NE(source.find("static_assert(Kernel::kSmemBytes == " + std::to_string(config.smem_bytes())),
            std::string::npos);
}

// Each cluster of a persistent grid takes cluster tiles c, c + clusters, ... of the scheduler's ordering;
// each of its CTAs one tile of it. Together the CTAs' valid tiles must cover every tile that holds rows to
// compute exactly once, and no other; the CTAs of a cluster must agree on whether they multicast, and may
// only when their tiles are all valid and of one expert. `m_indices` names the rows' experts (contiguous
// layouts); the scheduler reads `grouped_layout` where given (the prefix sums, or the k-grouped layout's ks,
// whose tiles must carry their expert's range of K), m_indices otherwise.
template <sm90::Layout kLayout, std::uint32_t kBlockM, std::uint32_t kBlockN, std::uint32_t kShapeN,
          std::uint32_t kClusterM = 1, std::uint32_t kClusterN = 1>
void expect_exact_cover(std::uint32_t m, std::uint32_t groups, const std::vector<std::int32_t>& m_indices,
                        const std::vector<std::int32_t>& masked_m, std::uint32_t clusters,
                        const std::vector<std::int32_t>& grouped_layout = {}) {
  using Scheduler = sm90::Scheduler<kLayout, kBlockM, kBlockN, kShapeN, 8, kClusterM, kClusterN>;
  constexpr std::uint32_t kClusterSize = kClusterM * kClusterN;
  constexpr std::uint32_t n_blocks = (kShapeN + kBlockN - 1) / kBlockN;
  const std::uint32_t m_blocks = (m + kBlockM - 1) / kBlockM;
  // The tiles that must be computed, with the expert each must use.
  std::vector<int> expected(groups * m_blocks * n_blocks, 0), seen(expected.size(), 0);
  for (std::uint32_t g = 0; g < groups; ++g)
    for (std::uint32_t mb = 0; mb < m_blocks; ++mb) {
      bool needed = true;
      if (kLayout == sm90::Layout::Masked) needed = std::int64_t(mb) * kBlockM < masked_m[g];
      if (sm90::is_contiguous(kLayout)) {
        needed = false;
        for (std::uint32_t row = mb * kBlockM; row < std::min((mb + 1) * kBlockM, m); ++row)
          needed |= m_indices[row] == std::int32_t(g);
      }
      for (std::uint32_t nb = 0; nb < n_blocks; ++nb) expected[(g * m_blocks + mb) * n_blocks + nb] = needed;
    }
  for (std::uint32_t cluster = 0; cluster < clusters; ++cluster) {
    std::vector<Scheduler> ctas;
    for (std::uint32_t rank = 0; rank < kClusterSize; ++rank)
      ctas.emplace_back(m, groups, grouped_layout.empty() ? m_indices.data() : grouped_layout.data(),
                        masked_m.data(), rank, cluster, clusters);
    for (;;) {
      sm90::Tile tiles[kClusterSize];
      bool more[kClusterSize];
      for (std::uint32_t rank = 0; rank < kClusterSize; ++rank) more[rank] = ctas[rank].next(tiles[rank]);
      for (std::uint32_t rank = 1; rank < kClusterSize; ++rank) {
        ASSERT_EQ(more[rank], more[0]) << "the CTAs of a cluster walk the same number of tiles";
        if (more[0]) ASSERT_EQ(tiles[rank].multicast, tiles[0].multicast);
      }
      if (!more[0]) break;
      for (const sm90::Tile& tile : tiles) {
        if (tile.multicast) {
          ASSERT_TRUE(tile.valid);
          ASSERT_EQ(tile.group, tiles[0].group) << "only tiles of one expert share an operand";
        }
        if (!tile.valid) continue;
        ASSERT_LT(tile.group, groups);
        if (kLayout == sm90::Layout::KGrouped) {
          std::uint32_t k_begin = 0;
          for (std::uint32_t g = 0; g < tile.group; ++g) k_begin += std::uint32_t(grouped_layout[g]);
          ASSERT_EQ(tile.k_begin, k_begin);
          ASSERT_EQ(tile.k_len, std::uint32_t(grouped_layout[tile.group]));
        }
        ASSERT_LT(tile.m_block, m_blocks);
        ASSERT_LT(tile.n_block, n_blocks);
        ++seen[(tile.group * m_blocks + tile.m_block) * n_blocks + tile.n_block];
      }
    }
  }
  EXPECT_EQ(seen, expected);
}

TEST(Scheduler, NormalLayoutCoversEveryTileExactlyOnce) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 50; ++trial) {
    const std::uint32_t m = 1 + rng() % 5000, grid = 1 + rng() % 132;
    // N and the tiling are compile-time in the kernel; a few representative ones.
    expect_exact_cover<sm90::Layout::Normal, 128, 112, 7168>(m, 1, {}, {}, grid);
    expect_exact_cover<sm90::Layout::Normal, 64, 16, 2112>(m, 1, {}, {}, grid);
    expect_exact_cover<sm90::Layout::Normal, 128, 160, 1000>(m, 1, {}, {}, grid);
    expect_exact_cover<sm90::Layout::Normal, 128, 128, 4096, 2, 1>(m, 1, {}, {}, grid / 2 + 1);
    expect_exact_cover<sm90::Layout::Normal, 64, 32, 2112, 1, 2>(m, 1, {}, {}, grid / 2 + 1);
  }
}

// Experts of uneven sizes (some empty), each segment padded with -1 rows to a multiple of 128.
std::vector<std::int32_t> contiguous_indices(std::mt19937& rng, std::uint32_t groups) {
  std::vector<std::int32_t> indices;
  for (std::uint32_t g = 0; g < groups; ++g) {
    const std::uint32_t rows = rng() % 3 == 0 ? 0 : rng() % 700;
    indices.insert(indices.end(), rows, std::int32_t(g));
    indices.resize((indices.size() + 127) / 128 * 128, -1);
  }
  return indices;
}

TEST(Scheduler, ContiguousLayoutCoversEveryExpertTileOnceAndSkipsPadding) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 60; ++trial) {
    const std::uint32_t groups = 1 + rng() % 64, grid = 1 + rng() % 132;
    const auto indices = contiguous_indices(rng, groups);
    if (indices.empty()) continue;
    const auto m = std::uint32_t(indices.size());
    expect_exact_cover<sm90::Layout::Contiguous, 128, 128, 4096>(m, groups, indices, {}, grid);
    expect_exact_cover<sm90::Layout::Contiguous, 64, 48, 1000>(m, groups, indices, {}, grid);
    expect_exact_cover<sm90::Layout::Contiguous, 64, 64, 4096, 2, 1>(m, groups, indices, {}, grid / 2 + 1);
    expect_exact_cover<sm90::Layout::Contiguous, 128, 128, 1000, 1, 2>(m, groups, indices, {}, grid / 2 + 1);
  }
}

// Padding anywhere: each 128-row block holds one expert's rows scattered among -1 rows (or only -1 rows),
// and M_sum need not be a multiple of 128. A tile row's expert is found past any run of padding rows.
TEST(Scheduler, ContiguousLayoutFindsTheExpertOfATileRowPastAnyPadding) {
  std::mt19937 rng(14);
  for (int trial = 0; trial < 60; ++trial) {
    const std::uint32_t groups = 1 + rng() % 16, grid = 1 + rng() % 132, m = 1 + rng() % 3000;
    std::vector<std::int32_t> indices(m, -1);
    for (std::uint32_t block = 0; block * 128 < m; ++block) {
      const auto expert = std::int32_t(rng() % groups);
      const std::uint32_t kept_in_64 = rng() % 65;  // how likely a row is the expert's, out of 64
      for (std::uint32_t row = block * 128; row < std::min(block * 128 + 128, m); ++row)
        if (rng() % 64 < kept_in_64) indices[row] = expert;
    }
    expect_exact_cover<sm90::Layout::Contiguous, 128, 128, 4096>(m, groups, indices, {}, grid);
    expect_exact_cover<sm90::Layout::Contiguous, 64, 48, 1000>(m, groups, indices, {}, grid);
    expect_exact_cover<sm90::Layout::Contiguous, 64, 64, 4096, 2, 1>(m, groups, indices, {}, grid / 2 + 1);
    expect_exact_cover<sm90::Layout::Contiguous, 128, 128, 1000, 1, 2>(m, groups, indices, {}, grid / 2 + 1);
  }
}

// The prefix-sum form of the same experts: expert g's rows from psum[g - 1] rounded up to 128 to psum[g].
TEST(Scheduler, ContiguousPsumLayoutCoversWhatTheSameExpertsAsMIndicesCover) {
  std::mt19937 rng(15);
  for (int trial = 0; trial < 60; ++trial) {
    const std::uint32_t groups = 1 + rng() % 64, grid = 1 + rng() % 132;
    std::vector<std::int32_t> indices, psum;
    for (std::uint32_t g = 0; g < groups; ++g) {
      indices.resize((indices.size() + 127) / 128 * 128, -1);
      const std::uint32_t rows = rng() % 3 == 0 ? 0 : rng() % 700;
      indices.insert(indices.end(), rows, std::int32_t(g));
      psum.push_back(std::int32_t(indices.size()));
    }
    indices.resize(indices.size() + rng() % 200, -1);  // rows past the last expert: padding
    if (indices.empty()) continue;
    const auto m = std::uint32_t(indices.size());
    expect_exact_cover<sm90::Layout::ContiguousPsum, 128, 128, 4096>(m, groups, indices, {}, grid, psum);
    expect_exact_cover<sm90::Layout::ContiguousPsum, 64, 48, 1000>(m, groups, indices, {}, grid, psum);
    expect_exact_cover<sm90::Layout::ContiguousPsum, 64, 64, 4096, 2, 1>(m, groups, indices, {}, grid / 2 + 1,
                                                                         psum);
  }
}

// Every expert's whole M x N grid, empty experts (K = 0) too, each tile with its expert's range of K.
TEST(Scheduler, KGroupedLayoutCoversEveryExpertWithItsRangeOfK) {
  std::mt19937 rng(16);
  for (int trial = 0; trial < 40; ++trial) {
    const std::uint32_t groups = 1 + rng() % 16, m = 1 + rng() % 3000, grid = 1 + rng() % 132;
    std::vector<std::int32_t> ks(groups);
    for (auto& k : ks) k = rng() % 3 == 0 ? 0 : std::int32_t(128 * (1 + rng() % 32));
    expect_exact_cover<sm90::Layout::KGrouped, 128, 128, 4096>(m, groups, {}, {}, grid, ks);
    expect_exact_cover<sm90::Layout::KGrouped, 64, 256, 1000>(m, groups, {}, {}, grid, ks);
  }
}

TEST(Scheduler, MaskedLayoutCoversTheRowsOfEachGroupOnly) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 60; ++trial) {
    const std::uint32_t groups = 1 + rng() % 256, m_max = 1 + rng() % 1024, grid = 1 + rng() % 132;
    std::vector<std::int32_t> masked(groups);
    // Counts outside [0, M_max] are clamped by the kernel: they must not reach past the group.
    for (auto& rows : masked) {
      const std::uint32_t pick = rng() % 6;
      const std::int32_t full = std::int32_t(m_max);
      rows = pick == 0   ? 0
             : pick == 1 ? full
             : pick == 2 ? -7
             : pick == 3 ? full + 999
                         : std::int32_t(rng() % (m_max + 1));
    }
    expect_exact_cover<sm90::Layout::Masked, 128, 160, 4096>(m_max, groups, {}, masked, grid);
    expect_exact_cover<sm90::Layout::Masked, 64, 32, 200>(m_max, groups, {}, masked, grid);
    expect_exact_cover<sm90::Layout::Masked, 128, 128, 4528, 2, 1>(m_max, groups, {}, masked, grid / 2 + 1);
    expect_exact_cover<sm90::Layout::Masked, 64, 96, 4096, 1, 2>(m_max, groups, {}, masked, grid / 2 + 1);
  }
}

}  // namespace
}  // namespace fgemm::cuda
