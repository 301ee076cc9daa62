// NVRTC compiles, for sm_90a and without a GPU, the kernels the heuristics choose for the normal shapes of
// the seed benchmark table (DeepSeek-V3 inference), with sfa loaded by the TMA (MN-major) or by the scale
// loader, and ptxas reports no spills (INT8's block recipe: a few bytes at most), no other local memory and no
// serialized wgmma.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "cuda/heuristics.hpp"
#include "cuda/kernel_source.hpp"
#include "cuda/mma_instruction.hpp"
#include "fgemm/sm90/row_blocks_plan.cuh"
#include "jit/compiler.hpp"

namespace fgemm::cuda {
namespace {

struct Shape {
  std::int64_t m, n, k;
};

// The 18 "normal" shapes of bench/seed_shapes.json.
constexpr Shape kSeedShapes[] = {
    {64, 2112, 7168},   {64, 24576, 1536},   {64, 32768, 512},   {64, 7168, 16384},   {64, 4096, 7168},
    {64, 7168, 2048},   {128, 2112, 7168},   {128, 24576, 1536}, {128, 32768, 512},   {128, 7168, 16384},
    {128, 4096, 7168},  {128, 7168, 2048},   {4096, 2112, 7168}, {4096, 24576, 1536}, {4096, 32768, 512},
    {4096, 7168, 16384}, {4096, 4096, 7168}, {4096, 7168, 2048},
};

// INT8's block recipe takes FP8's tilings where ptxas spills no more than a register or two of them, which on an
// H100 ran faster than the tilings it does not spill (src/cuda/candidates.cpp); no other kind spills at all.
constexpr int kInt8BlockSpillBytes = 32;

void expect_compiles_cleanly(const KernelConfig& config) {
  const jit::KernelSpec spec{kGemmKernelSymbol, gemm_kernel_source(config), config.smem_bytes()};
  const jit::CompileResult result = jit::compile(spec, jit::Compiler::Nvrtc);
  EXPECT_FALSE(result.cubin.empty()) << config.name();
  EXPECT_GT(result.ptxas.registers, 0) << config.name();
  const bool int8_block = config.shape.ab_dtype == DType::I8 && config.block_scaled();
  const int spill_bytes = int8_block ? kInt8BlockSpillBytes : 0;
  EXPECT_LE(result.ptxas.spill_store_bytes, spill_bytes) << config.name() << "\n" << result.log;
  EXPECT_LE(result.ptxas.spill_load_bytes, spill_bytes) << config.name() << "\n" << result.log;
  EXPECT_LE(result.ptxas.stack_frame_bytes, spill_bytes) << config.name() << "\n" << result.log;
  // C7514: ptxas made the wgmma synchronous (an accumulator read while an MMA may be writing it).
  EXPECT_EQ(result.log.find("C7514"), std::string::npos) << config.name() << "\n" << result.log;
}

// The heuristics' kernels of `size` with sfa loaded by the TMA and copied by the producer's helper warp.
void expect_chosen_kernels_compile_cleanly(ProblemSize size, const DeviceLimits& device) {
  for (bool sfa_by_tma : {true, false}) {
    size.shape.sfa_by_tma = sfa_by_tma;
    expect_compiles_cleanly(choose_config(size, device));
  }
}

// A large problem whose N and K are multiples of neither 64 nor 128, of one kind (FP8's block recipe by default).
ProblemSize ragged_problem(DType dtype = DType::E4M3, detail::Scaling scaling = detail::Scaling::Block) {
  ProblemSize size;
  size.m = 4096;
  size.shape.n = 7000;
  size.shape.k = 4000;
  size.shape.ab_dtype = dtype;
  size.shape.scaling = scaling;
  return size;
}

// `size` in the k-grouped layout: `groups` experts of `k_per_group` each (its kernels take any K).
ProblemSize k_grouped_of(ProblemSize size, std::int64_t groups, std::int64_t k_per_group) {
  size.num_groups = groups;
  size.k_per_group = k_per_group;
  size.shape.layout = detail::GemmLayout::KGrouped;
  size.shape.k = 0;
  return size;
}

// The block recipe in FP8 and in INT8 (whose tilings the heuristics limit to what its registers allow: FP8's
// wide tiles at M = 4096, deep rings of stages at M = 64 and 128).
TEST(GemmKernelCompile, SeedShapesChosenConfigurations) {
  const DeviceLimits h100;
  for (DType dtype : {DType::E4M3, DType::I8}) {
    for (const Shape& shape : kSeedShapes) {
      ProblemSize size;
      size.m = shape.m;
      size.shape.n = shape.n;
      size.shape.k = shape.k;
      size.shape.ab_dtype = dtype;
      expect_chosen_kernels_compile_cleanly(size, h100);
    }
  }
}

// The epilogue variants and the tile extremes: FP32 output with C, BF16 with C, the widest and narrowest tiles.
TEST(GemmKernelCompile, EpilogueVariantsAndTileExtremes) {
  const DeviceLimits h100;
  ProblemSize size = ragged_problem();
  for (auto [f32, with_c] : {std::pair{true, true}, std::pair{false, true}, std::pair{true, false}}) {
    size.shape.output_f32 = f32;
    size.shape.has_c = with_c;
    expect_compiles_cleanly(choose_config(size, h100));
  }
  size.shape = KernelShape{};
  size.shape.n = 7000;
  size.shape.k = 4000;
  for (const auto& config : candidate_configs(size, h100)) {
    const bool extreme = config.block_n == 16 || config.block_n == 160 || config.block_n == 256 || config.block_n == 8;
    if (extreme) expect_compiles_cleanly(config);
  }
}

// The grouped layouts at the tiles their seed shapes choose (contiguous: M_sum rows, by m_indices and by prefix sums
// with D padded or packed; masked: expected_m per group).
TEST(GemmKernelCompile, GroupedLayouts) {
  const DeviceLimits h100;
  const struct {
    detail::GemmLayout layout;
    std::int64_t m, groups, n, k;
  } cases[] = {
      {detail::GemmLayout::Contiguous, 32768, 1, 4096, 7168}, {detail::GemmLayout::Contiguous, 32768, 1, 7168, 2048},
      {detail::GemmLayout::Masked, 1024, 1, 4096, 7168},      {detail::GemmLayout::Masked, 512, 2, 7168, 2048},
      {detail::GemmLayout::Masked, 256, 4, 4096, 7168},       {detail::GemmLayout::Masked, 576, 5, 4528, 1280},
  };
  for (const auto& c : cases) {
    ProblemSize size;
    size.m = c.m;
    size.num_groups = c.groups;
    size.shape.layout = c.layout;
    size.shape.n = c.n;
    size.shape.k = c.k;
    expect_chosen_kernels_compile_cleanly(size, h100);
    // The prefix-sum form, with D padded and packed (d_row_starts), BF16 and FP32 out.
    if (c.layout != detail::GemmLayout::Contiguous) continue;
    size.shape.psum = true;
    for (bool packed_d : {false, true}) {
      for (bool output_f32 : {false, true}) {
        size.shape.packed_d = packed_d;
        size.shape.output_f32 = output_f32;
        expect_compiles_cleanly(choose_config(size, h100));
      }
    }
  }
}

// Split-K in both kinds and layouts: the narrowest and widest tile of each tile height, each split count, FP32
// output with C.
TEST(GemmKernelCompile, SplitKVariants) {
  const DeviceLimits h100;
  for (DType dtype : {DType::E4M3, DType::BF16}) {
    for (auto layout : {detail::GemmLayout::Normal, detail::GemmLayout::Masked}) {
      ProblemSize size;
      size.m = 64;
      size.num_groups = layout == detail::GemmLayout::Masked ? 4 : 1;
      size.shape.layout = layout;
      size.shape.n = 2112;
      size.shape.k = 7168;
      size.shape.ab_dtype = dtype;
      size.shape.scaling = dtype == DType::E4M3 ? detail::Scaling::Block : detail::Scaling::None;
      size.shape.sfa_by_tma = true;
      size.shape.output_f32 = layout == detail::GemmLayout::Normal;
      size.shape.has_c = layout == detail::GemmLayout::Normal;
      for (int block_m : {64, 128}) {
        int narrowest = 1 << 30, widest = 0;
        const auto configs = candidate_configs(size, h100, false, true);
        for (const auto& config : configs) {
          if (config.block_m != block_m || config.split_k == 1) continue;
          narrowest = std::min(narrowest, config.block_n);
          widest = std::max(widest, config.block_n);
        }
        for (const auto& config : configs) {
          const bool edge = config.block_n == narrowest || config.block_n == widest;
          if (config.block_m == block_m && config.split_k > 1 && edge) expect_compiles_cleanly(config);
        }
      }
    }
  }
}

// The unscaled kinds (BF16, FP16): every storage order of A and B, each output type with and without C, the
// grouped layouts (psum among them), and the widest and narrowest tiles of each order.
TEST(GemmKernelCompile, UnscaledKinds) {
  const DeviceLimits h100;
  for (DType dtype : {DType::BF16, DType::F16}) {
    for (int order = 0; order < 4; ++order) {
      ProblemSize size = ragged_problem(dtype, dtype == DType::E4M3 ? detail::Scaling::Block : detail::Scaling::None);
      size.shape.a_mn_major = order & 1;
      size.shape.b_mn_major = order & 2;
      for (auto [f32, with_c] : {std::pair{false, false}, std::pair{true, true}, std::pair{false, true}}) {
        size.shape.output_f32 = f32;
        size.shape.has_c = with_c;
        expect_compiles_cleanly(choose_config(size, h100));
      }
      if (dtype == DType::F16) continue;
      size.shape.output_f32 = false;
      size.shape.has_c = false;
      int narrowest = 1 << 30, widest = 0;
      for (const auto& config : candidate_configs(size, h100)) {
        narrowest = std::min(narrowest, config.block_n);
        widest = std::max(widest, config.block_n);
      }
      for (const auto& config : candidate_configs(size, h100))
        if (config.block_n == narrowest || config.block_n == widest) expect_compiles_cleanly(config);
    }
  }
  for (auto [layout, psum, b_mn_major] : {std::tuple{detail::GemmLayout::Contiguous, false, false},
                                          std::tuple{detail::GemmLayout::Contiguous, true, true},
                                          std::tuple{detail::GemmLayout::Masked, false, false}}) {
    ProblemSize size;
    size.m = layout == detail::GemmLayout::Masked ? 256 : 32768;
    size.num_groups = layout == detail::GemmLayout::Masked ? 4 : 1;
    size.shape.layout = layout;
    size.shape.n = 4096;
    size.shape.k = 7168;
    size.shape.ab_dtype = DType::BF16;
    size.shape.scaling = detail::Scaling::None;
    size.shape.psum = psum;
    size.shape.b_mn_major = b_mn_major;
    expect_compiles_cleanly(choose_config(size, h100));
  }
  ProblemSize weight_gradient;  // the experts' weight gradient: FP32 out, with C and without
  weight_gradient.m = 4096;
  weight_gradient.shape.n = 7168;
  weight_gradient.shape.ab_dtype = DType::BF16;
  weight_gradient.shape.scaling = detail::Scaling::None;
  weight_gradient.shape.a_mn_major = weight_gradient.shape.b_mn_major = true;
  weight_gradient.shape.output_f32 = true;
  ProblemSize k_grouped = k_grouped_of(weight_gradient, 8, 4096);
  for (bool with_c : {false, true}) {
    k_grouped.shape.has_c = with_c;
    expect_compiles_cleanly(choose_config(k_grouped, h100));
  }
}

// The 16-bit kinds' decode tiles whose two math warpgroups take alternate K blocks: 64 x 16 (M = 1, the rows of A
// trimmed) and 64 x 32, into 16-bit D and FP32.
TEST(GemmKernelCompile, SixteenBitDecodeTilesAlternatingKBlocks) {
  const DeviceLimits h100;
  for (DType dtype : {DType::BF16, DType::F16}) {
    for (auto [m, block_n, f32] : {std::tuple{1, 16, false}, std::tuple{128, 32, false}, std::tuple{100, 32, true}}) {
      ProblemSize size;
      size.m = m;
      size.shape.n = 2112;
      size.shape.k = 7168;
      size.shape.ab_dtype = dtype;
      size.shape.scaling = detail::Scaling::None;
      size.shape.output_f32 = f32;
      const KernelConfig config = choose_config(size, h100, BlockShape{64, block_n});
      EXPECT_TRUE(config.alternate_k_blocks) << config.name();
      expect_compiles_cleanly(config);
    }
  }
}

// The 16-bit kinds' FP32 D staged in column halves for a fifth stage (one wave of 192 x 96 tiles, and of 128 x 160
// ones): written, and accumulated in place, from each storage order of the weight gradient's operands.
TEST(GemmKernelCompile, SixteenBitFp32StagedInHalves) {
  const DeviceLimits h100;
  for (DType dtype : {DType::BF16, DType::F16}) {
    for (bool in_place : {false, true}) {
      ProblemSize size;
      size.m = 576;
      size.shape.n = 4096;
      size.shape.k = 7168;
      size.shape.ab_dtype = dtype;
      size.shape.scaling = detail::Scaling::None;
      size.shape.a_mn_major = size.shape.b_mn_major = in_place;
      size.shape.output_f32 = true;
      size.shape.c_in_d = in_place;
      const KernelConfig config = choose_config(size, h100);
      EXPECT_TRUE(config.staged_in_halves) << config.name();
      expect_compiles_cleanly(config);
      size.m = 1500;
      size.shape.n = 1536;
      size.shape.k = 1408;
      const KernelConfig narrower = choose_config(size, h100);
      EXPECT_EQ(narrower.staged_in_halves, in_place) << narrower.name();
      if (in_place) expect_compiles_cleanly(narrower);
    }
  }
}

// Forced stage counts (for measuring) on the decode tiles whose times they change (docs/PERFORMANCE.md): 16-bit and
// FP8 64-row tiles alternating K blocks with 8 and 12 stages.
TEST(GemmKernelCompile, ForcedStageCounts) {
  const DeviceLimits h100;
  for (DType dtype : {DType::BF16, DType::E4M3}) {
    ProblemSize size;
    size.m = 1;
    size.shape.n = 2112;
    size.shape.k = 7168;
    size.shape.ab_dtype = dtype;
    size.shape.scaling = dtype == DType::E4M3 ? detail::Scaling::Block : detail::Scaling::None;
    size.shape.sfa_by_tma = true;
    for (int stages : {8, 12}) {
      const KernelConfig config = choose_config(size, h100, BlockShape{64, 32, 0, 0, 0, 0, stages});
      EXPECT_EQ(config.num_stages, stages) << config.name();
      EXPECT_TRUE(config.alternate_k_blocks) << config.name();
      expect_compiles_cleanly(config);
    }
  }
}

// MN-major operands in runs of 32 elements (the 64-byte swizzle), where a tile's extents are not whole runs of 64:
// 192 x 96 and 128 x 160 with B MN-major (TN and NN), 64-row tiles whose warpgroups take 32 and 96 columns, and
// clusters of two sharing a 32-row slice of A (1 x 2, 64-row tiles) or of B (2 x 1, 64 columns), each with
// BF16 out and with FP32 accumulated in place.
TEST(GemmKernelCompile, MnMajorRunsOf32) {
  const DeviceLimits h100;
  const BlockShape shapes[] = {{192, 96, 1, 1}, {128, 160, 1, 1}, {64, 64, 1, 1},
                               {64, 192, 1, 1}, {64, 128, 1, 2}, {128, 64, 2, 1}};
  for (int order : {2, 3}) {  // NN, TN
    ProblemSize size = ragged_problem(DType::BF16, detail::Scaling::None);
    size.shape.a_mn_major = order & 1;
    size.shape.b_mn_major = order & 2;
    for (bool in_place : {false, true}) {
      size.shape.output_f32 = size.shape.c_in_d = in_place;
      for (const BlockShape& shape : shapes) {
        if (shape.cluster_n == 2 && !size.shape.a_mn_major) continue;  // a K-major A's slice is no run
        const KernelConfig config = choose_config(size, h100, shape);
        EXPECT_EQ(shape.cluster_n == 2 ? config.mn_major_run_a() : config.mn_major_run_b(), 32) << config.name();
        expect_compiles_cleanly(config);
      }
    }
  }
}

// FP8's 1D1D recipe (weight gradients): the normal layout with its scales loaded by the TMA and by the helper
// warp, FP32 out accumulating in place (C is D), BF16 out, a C of its own, every candidate of the widest
// warpgroups of two and of three math warpgroups; and the k-grouped layout in place and with BF16 out.
TEST(GemmKernelCompile, RowBlocksRecipe) {
  const DeviceLimits h100;
  ProblemSize size;
  size.m = 4096;
  size.shape.n = 4096;
  size.shape.k = 7168;
  size.shape.scaling = detail::Scaling::RowBlocks;
  struct Epilogue {
    bool output_f32, has_c, c_in_d;
  };
  for (bool sfa_by_tma : {true, false}) {
    size.shape.sfa_by_tma = sfa_by_tma;
    for (const Epilogue& epilogue : {Epilogue{true, false, true}, Epilogue{false, false, false},
                                     Epilogue{true, true, false}, Epilogue{false, true, false}}) {
      size.shape.output_f32 = epilogue.output_f32;
      size.shape.has_c = epilogue.has_c;
      size.shape.c_in_d = epilogue.c_in_d;
      for (const auto& config : candidate_configs(size, h100)) {
        // The two widest warpgroups of each schedule: 112 and 128 columns of two math warpgroups, 96 and 128 of
        // three (whose tiles widen in steps of 32).
        const int step = config.two_partials() ? 16 : 32;
        const bool widest =
            config.warpgroup_n() > sm90::row_blocks::kMaxWarpgroupN - 2 * step || config.block_n == 160;
        if (widest) expect_compiles_cleanly(config);
      }
    }
  }
  // The k-grouped layout: FP32 accumulating in place, and BF16 out (the gradient alone) with and without a C, FP32
  // or BF16.
  ProblemSize k_grouped = k_grouped_of(size, 8, 4096);
  for (const Epilogue& epilogue : {Epilogue{true, false, true}, Epilogue{false, false, false},
                                   Epilogue{false, true, false}}) {
    k_grouped.shape.output_f32 = epilogue.output_f32;
    k_grouped.shape.has_c = epilogue.has_c;
    k_grouped.shape.c_in_d = epilogue.c_in_d;
    expect_chosen_kernels_compile_cleanly(k_grouped, h100);
  }
  k_grouped.shape.c_of_d_type = true;
  expect_chosen_kernels_compile_cleanly(k_grouped, h100);
}

// Accumulation in place (C is D, FP32), whose store adds to D: FP8's block recipe, INT8's two scaled recipes,
// BF16 in each storage order and the BF16 k-grouped weight gradient.
TEST(GemmKernelCompile, AccumulationInPlace) {
  const DeviceLimits h100;
  ProblemSize size = ragged_problem();
  size.shape.output_f32 = true;
  size.shape.c_in_d = true;
  size.shape.sfa_by_tma = true;
  expect_compiles_cleanly(choose_config(size, h100));
  size.shape.ab_dtype = DType::I8;
  for (auto scaling : {detail::Scaling::Block, detail::Scaling::RowColumn}) {
    size.shape.scaling = scaling;
    expect_compiles_cleanly(choose_config(size, h100));
  }
  size.shape.ab_dtype = DType::BF16;
  size.shape.scaling = detail::Scaling::None;
  for (int order = 0; order < 4; ++order) {
    size.shape.a_mn_major = order & 1;
    size.shape.b_mn_major = order & 2;
    expect_compiles_cleanly(choose_config(size, h100));
  }
  size.shape.a_mn_major = size.shape.b_mn_major = true;
  expect_compiles_cleanly(choose_config(k_grouped_of(size, 8, 4096), h100));
}

// A C of its own through its ring (epilogue_c_ring.cuh), FP32 or of D's 16-bit type, in every kind that takes one:
// at the widest warpgroups of 64- and 128-row tiles, the largest ring (fewest stages) and the smallest (most
// stages); and the FP8 1D1D
// k-grouped layout's stack of C (BF16's is in UnscaledKinds).
TEST(GemmKernelCompile, RingsOfC) {
  const DeviceLimits h100;
  const std::pair<DType, detail::Scaling> kinds[] = {
      {DType::E4M3, detail::Scaling::Block}, {DType::E4M3, detail::Scaling::RowBlocks},
      {DType::BF16, detail::Scaling::None},  {DType::F16, detail::Scaling::None},
      {DType::I8, detail::Scaling::Block},   {DType::I8, detail::Scaling::RowColumn}};
  for (auto [dtype, scaling] : kinds) {
    for (bool c_of_d_type : {false, true}) {
      ProblemSize size = ragged_problem(dtype, scaling);
      size.shape.sfa_by_tma = true;
      size.shape.has_c = true;
      size.shape.c_of_d_type = c_of_d_type;
      size.shape.output_f16 = dtype == DType::F16;
      const auto configs = candidate_configs(size, h100);
      for (int block_m : {64, 128}) {
        const KernelConfig *widest_largest = nullptr, *widest_smallest = nullptr;
        for (const auto& config : configs) {
          if (config.block_m != block_m || config.cluster_size() != 1) continue;
          EXPECT_GE(config.c_slots, 1) << config.name();
          EXPECT_EQ(config.c_bytes, c_of_d_type ? 2 : 4) << config.name();
          const auto key = [](const KernelConfig* c) { return std::pair{c->warpgroup_n(), c->c_slots}; };
          if (!widest_largest || key(&config) > key(widest_largest)) widest_largest = &config;
          const auto narrow_ring = [](const KernelConfig* c) { return std::pair{c->warpgroup_n(), -c->c_slots}; };
          if (!widest_smallest || narrow_ring(&config) > narrow_ring(widest_smallest)) widest_smallest = &config;
        }
        ASSERT_NE(widest_largest, nullptr);
        expect_compiles_cleanly(*widest_largest);
        if (widest_smallest->c_slots != widest_largest->c_slots) expect_compiles_cleanly(*widest_smallest);
      }
    }
  }
  ProblemSize weight_gradient;
  weight_gradient.m = 4096;
  weight_gradient.shape.n = 4096;
  weight_gradient.shape.scaling = detail::Scaling::RowBlocks;
  weight_gradient.shape.sfa_by_tma = true;
  weight_gradient.shape.output_f32 = true;
  weight_gradient.shape.has_c = true;
  expect_compiles_cleanly(choose_config(k_grouped_of(weight_gradient, 8, 4096), h100));
}

// INT8: each recipe (exact INT32 into D int32, per token and channel, blocks) with each output type, C and bias
// of each type, the chosen kernels of the seed shapes and every layout, and the widest and narrowest tiles.
// Fewer rows than a tile (8, 16 and 32 rows of A a stage) in every kind with K-major A, and the 16-bit kinds'
// shapes of few tiles that the heuristics split.
TEST(GemmKernelCompile, FewRowsOfA) {
  const DeviceLimits h100;
  const struct {
    DType dtype;
    detail::Scaling scaling;
  } kinds[] = {{DType::E4M3, detail::Scaling::Block}, {DType::E4M3, detail::Scaling::RowBlocks},
               {DType::BF16, detail::Scaling::None},  {DType::I8, detail::Scaling::Block},
               {DType::I8, detail::Scaling::RowColumn}, {DType::I8, detail::Scaling::None}};
  for (const auto& kind : kinds) {
    for (std::int64_t m : {1, 9, 17}) {
      ProblemSize size;
      size.m = m;
      size.shape.n = 2112;
      size.shape.k = 7168;
      size.shape.ab_dtype = kind.dtype;
      size.shape.scaling = kind.scaling;
      size.shape.sfa_by_tma = true;
      size.shape.output_f32 = kind.dtype == DType::I8 && kind.scaling == detail::Scaling::None;
      const KernelConfig chosen = choose_config(size, h100);
      EXPECT_GT(chosen.a_rows, 0) << chosen.name();
      expect_compiles_cleanly(chosen);
    }
  }
  for (std::int64_t m : {1, 128}) {
    ProblemSize size;
    size.m = m;
    size.shape.n = 576;
    size.shape.k = 7168;
    size.shape.ab_dtype = DType::BF16;
    size.shape.scaling = detail::Scaling::None;
    size.shape.has_c = m == 1;
    const KernelConfig chosen = choose_config(size, h100);
    EXPECT_GT(chosen.split_k, 1) << chosen.name();
    expect_compiles_cleanly(chosen);
  }
}

// INT8's block recipe in the grouped layouts, at the seed shapes' (N, K) with sfa loaded by the TMA or the helper
// warp, and the masked layout with C at N = 32768, K = 512 (three math warpgroups of 96 columns spilled there).
TEST(GemmKernelCompile, Int8BlockGroupedLayouts) {
  const DeviceLimits h100;
  const auto grouped = [](detail::GemmLayout layout, std::int64_t n, std::int64_t k) {
    ProblemSize size;
    size.m = layout == detail::GemmLayout::Masked ? 256 : 32768;
    size.num_groups = 4;
    size.shape.layout = layout;
    size.shape.n = n;
    size.shape.k = k;
    size.shape.ab_dtype = DType::I8;
    return size;
  };
  for (auto layout : {detail::GemmLayout::Contiguous, detail::GemmLayout::Masked}) {
    for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{4096, 7168}, {7168, 2048}})
      expect_chosen_kernels_compile_cleanly(grouped(layout, n, k), h100);
  }
  ProblemSize masked_with_c = grouped(detail::GemmLayout::Masked, 32768, 512);
  masked_with_c.m = 4096;
  masked_with_c.shape.sfa_by_tma = true;
  masked_with_c.shape.has_c = true;
  expect_compiles_cleanly(choose_config(masked_with_c, h100));
}

TEST(GemmKernelCompile, Int8Kinds) {
  const DeviceLimits h100;
  struct Epilogue {
    detail::Scaling scaling;
    bool output_f32, output_f16, with_c, with_bias;
    DType bias_dtype;
  };
  constexpr auto kRowColumn = detail::Scaling::RowColumn;
  constexpr auto kBlock = detail::Scaling::Block;
  const Epilogue epilogues[] = {
      {detail::Scaling::None, true, false, false, false, DType::F32},
      {kRowColumn, false, false, false, false, DType::F32},
      {kRowColumn, false, true, true, true, DType::F16},
      {kRowColumn, true, false, true, true, DType::F32},
      {kRowColumn, false, false, false, true, DType::BF16},
      {kBlock, false, false, false, false, DType::F32},
      {kBlock, true, false, true, true, DType::F32},
      {kBlock, false, true, false, true, DType::F16},
  };
  for (const Epilogue& epilogue : epilogues) {
    for (const Shape& shape : {kSeedShapes[0], kSeedShapes[8], kSeedShapes[13], Shape{777, 1001, 784}}) {
      ProblemSize size;
      size.m = shape.m;
      size.shape.n = shape.n;
      size.shape.k = shape.k;
      size.shape.ab_dtype = DType::I8;
      size.shape.sfa_by_tma = true;
      size.shape.scaling = epilogue.scaling;
      size.shape.output_f32 = epilogue.output_f32;
      size.shape.output_f16 = epilogue.output_f16;
      size.shape.has_c = epilogue.with_c;
      size.shape.has_bias = epilogue.with_bias;
      size.shape.bias_dtype = epilogue.bias_dtype;
      const KernelConfig chosen = choose_config(size, h100);
      EXPECT_TRUE(mma_n_is_valid(MmaType::S8S32, chosen.mma_n())) << chosen.name();
      expect_compiles_cleanly(chosen);
    }
  }
  for (auto scaling : {kRowColumn, kBlock}) {
    ProblemSize size = ragged_problem(DType::I8, scaling);
    size.shape.has_c = true;
    size.shape.has_bias = true;
    int narrowest = 1 << 30, widest = 0;
    for (const auto& config : candidate_configs(size, h100)) {
      narrowest = std::min(narrowest, config.block_n);
      widest = std::max(widest, config.block_n);
    }
    for (const auto& config : candidate_configs(size, h100))
      if (config.block_n == narrowest || config.block_n == widest) expect_compiles_cleanly(config);
    for (auto layout : {detail::GemmLayout::Contiguous, detail::GemmLayout::Masked}) {
      ProblemSize grouped = size;
      grouped.m = layout == detail::GemmLayout::Masked ? 256 : 32768;
      grouped.num_groups = layout == detail::GemmLayout::Masked ? 4 : 1;
      grouped.shape.layout = layout;
      grouped.shape.has_c = grouped.shape.has_bias = false;
      expect_compiles_cleanly(choose_config(grouped, h100));
    }
  }
}

}  // namespace
}  // namespace fgemm::cuda
