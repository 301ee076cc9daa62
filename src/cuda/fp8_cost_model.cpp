// FP8's candidate tiles and cost models (cost_model.hpp): the block recipe's, which INT8's block recipe shares (the
// same schedule, with the same tensor-core rate), and the 1D1D recipe's.
#include <algorithm>

#include "cuda/cost_model.hpp"
#include "fgemm/common.cuh"
#include "fgemm/sm90/block_scaled_plan.cuh"
#include "fgemm/sm90/row_blocks_plan.cuh"

namespace fgemm::cuda {
namespace {

// A simple machine model of one Hopper SM, in cycles, good enough to rank tilings. Its constants were
// fitted to the time of 21 tile shapes on each normal seed shape on an H100 (bench/bench_gpu.py --sweep);
// in the latest sweep (24 shapes, 128 x 256 among them) the chosen tile was 1.3% slower than the best one on
// average, 10% at worst.
constexpr double kMmaFlopsPerCycle = 8192;       // dense FP8 wgmma throughput of one SM
constexpr double kSmLoadBytesPerCycle = 72;      // one SM's share of L2-to-SM bandwidth
// Per K block, what the MMAs do not hide: barrier round trips and the promotion, which with a second partial
// accumulator overlaps the next block's MMAs. The last two were refitted to BLOCK_M 128 (two partials)
// against 192 (one) on the four large-M seed shapes where the two come close.
constexpr double kKBlockOverheadCycles = 400;             // two math warpgroups, one partial accumulator
constexpr double kKBlockOverheadCycles3 = 540;            // three math warpgroups (BLOCK_M 192), one partial
constexpr double kKBlockOverheadCyclesTwoPartials = 300;  // two partial accumulators
// With scales staged in shared memory and the K loop unrolled over the stages, 64-row tiles whose two
// warpgroups split the columns (sharing A and its scales) measured 5-15% faster than 128 x 128 tiles on the
// large-M seed shapes of the normal and contiguous layouts on an H100 (no faster on the masked ones); their
// overhead was refitted to that.
constexpr double kKBlockOverheadCyclesSplitN = 200;
constexpr double kTwoScaleBlocksCycles = 2;      // per column, when a warpgroup's columns need two sfb values
constexpr double kTileOverheadCycles = 2400;     // per tile: scale set-up, epilogue latency, pipeline refill
constexpr double kStoreBytesPerCycle = 64;       // TMA store of D from one SM
// The DRAM bound takes the H100's figure on every device: the decode regime's choice relies on every candidate
// tying there (kDecodeMaxM, heuristics.hpp). With an H200's own figure, 128 x 24576 x 1536 took 64 x 256 tiles
// there and ran 19.9 us, against 16.8 in the 64 x 192 that the ties choose (docs/PERFORMANCE.md).
constexpr double kDramBytesPerCycle = kFittedDramBytesPerCycle;
// BLOCK_M 128 keeps two 64 x BLOCK_N FP32 accumulators per thread: past 160 columns they no longer fit in
// the 232 registers a math thread gets. With BLOCK_M 64 each warpgroup holds half of BLOCK_N.
constexpr int kMaxBlockN128 = 160;
constexpr int kMaxBlockN64 = 256;
// Besides, 128 x 256 tiles, whose warpgroups multiply their 256 columns in two halves through one partial
// accumulator (BF16 out without C: FP32 staging of D would leave room for two stages only). In the sweep of
// the normal seed shapes they were the fastest tile from M = 4096 and K = 1536 on, but 5-8% slower than the
// best where M = 128 or K = 512 (with three stages then and a single partial accumulator, they start
// slowly), where the model below cannot tell them apart: the heuristics choose them from two tile rows and
// eight K blocks on (forcing them works for any problem).
constexpr int kHalvesBlockN = 256;
constexpr std::int64_t kHalvesMinM = 256;
constexpr std::int64_t kHalvesMinK = 1024;
// 128 x 256 tiles have room for a fourth stage only beside half of D, which is then staged and stored one
// column half at a time, the second waiting until the first has been read. On an H100, 4 stages against 3 were
// 1-6% faster on the masked seed shapes (1.7 to 1.9 waves of tiles) and 2% on 4096 x 4096 x 7168 (3.9 waves),
// but 1-2.5% slower on 4096 x 7168 x 16384 (6.8 waves) and contiguous 32768 x 4096 x 7168 (31 waves): the
// extra stage helps the start of each tile's pipeline, the split store costs every tile.
constexpr std::int64_t kMaxWavesForFourStagesOfHalves = 4;
// BLOCK_M 192 runs three math warpgroups (152 registers each; the 1D1D recipe's 160): tiles 32 to 128 wide, in
// steps of 32.
constexpr int kMaxBlockN192 = 128;

// The 1D1D recipe (math_row_blocks.cuh) with two math warpgroups gives a stage back one K block late, once its
// block is promoted during the next block's MMAs: stages - 2 of them load while a block is multiplied. With fewer
// than four the TMA loads too little ahead (on an H100, 4096 x 4096 x 7168 in place: 350 µs with 64 x 256 tiles of
// three stages, 262 with 128 x 128 of four). Three math warpgroups (one partial each) give a stage back as soon as
// its block is promoted: nearly stages - 1 of them load meanwhile, so three stages are enough for them. That lets
// 192 x 128 tiles with FP32 D (whose staging leaves room for three) run: on an H100 they were the fastest tiles of
// the k-grouped gradients of 4 and 8 experts (1.05-1.07x 128 x 128) and of 2112 x 4096 x 7168 in place (1.05x
// 192 x 96).
constexpr int kMinRowBlocksStages = 4;
constexpr int kMinRowBlocksStages3 = 3;
constexpr int kMaxRowBlocksStagesThreeOf128 = 3;
// Its model was fitted to every tile of its 20 benchmark shapes forced on an H100 (docs/PERFORMANCE.md). Its
// promotion takes two CUDA-core operations per element and K block (the product of the row's and the column's
// scale, and the FMA), and the next K block's MMAs hide about half of them. A load waits longer the busier the
// DRAM is: where D is FP32 and accumulated in place (read and written once per tile) and K is short, the
// heuristics' 128 x 128 tiles with four stages ran 12% slower than 128 x 96 with six (24576 x 4096 x 1536,
// 7168 x 4096 x 2048), and as fast on long K.
constexpr double kFp32OpsPerCycle = 128;  // one SM's CUDA cores
constexpr double kRowBlocksPromotionUnhidden = 0.5;
constexpr double kRowBlocksKBlockOverheadCycles = 150;
// Three math warpgroups: each promotes while the other two multiply, so no part of a promotion is charged, only a
// K block's overhead (its wait for the MMAs, the barriers' round trips). Fitted to the 20 shapes with 128 x 128,
// 192 x 128 and 192 x 96 tiles forced beside the choice (docs/PERFORMANCE.md; on an H100, and before 192 x 128 was
// offered, on an H200 with 192 x 64 too): on the H100 the choices came 0.5% slower than the best forced tile on
// average and 7.2% at worst (32768 x 4096 x 512 into BF16, four K blocks a tile, where 192 x 96 with five stages
// beat 192 x 128 with three). They win where 192 rows divide M better than 128 (576 x 4096 x 7168 in place: 1.70x
// 128 x 128), with 16-bit D (24576 x 4096 x 1536: 1.10x) and on the short tiles of a k-grouped gradient of
// experts (1.04-1.08x).
constexpr double kRowBlocksKBlockOverheadCycles3 = 350;
// A stage of theirs goes back once its block is promoted, about a quarter of a K block after its MMAs: on an H200,
// 7168 x 4096 x 2048 in place ran 6% slower in 192 x 128 tiles of three stages than in 192 x 96 with four.
constexpr double kRowBlocksPromotionHoldsStage3 = 0.25;
constexpr double kIdleDramLoadLatencyCycles = 1000;  // a load's latency with the DRAM idle
// A queue's wait grows as 1 / (1 - utilization); kept finite for memory-bound shapes.
constexpr double kMaxDramUtilization = 0.9;
// Where the TMA adds the tile to D in place, rows of a warpgroup's FP32 columns that are not whole 128-byte
// lines ran slower on the memory-bound shapes (32768 x 4096 x 512 on an H100: 64 x 96 tiles, rows of 192 bytes,
// 589 µs; 128 x 112 and 128 x 80, 627; 128 x 96, 64 x 128 and 128 x 128, 553-561).
constexpr int kLineBytes = 128;

// A K block's MMAs or its loads, whichever take longer (a multicast operand counts once per cluster).
double mma_or_load_cycles(const ProblemSize& problem, const KernelConfig& config) {
  const double mma = double(config.block_m) * config.block_n * config.block_k() * 2 / kMmaFlopsPerCycle;
  // TMA fetches no rows past the end of A, so a small M loads only its own rows.
  const double rows_a =
      double(std::min<std::int64_t>(std::max<std::int64_t>(problem.m, 1), config.block_m)) / config.cluster_n;
  const double rows_b = double(config.block_n) / config.cluster_m;
  return std::max(mma, (rows_a + rows_b) * config.block_k() / kSmLoadBytesPerCycle);
}

}  // namespace

std::vector<KernelConfig> fp8_candidates(const ProblemSize& problem, const DeviceLimits& device, bool with_clusters) {
  std::vector<KernelConfig> configs;
  for (int block_m : {64, 128, 192}) {
    // 192-row tiles would span two experts' 128-aligned segments of the contiguous layout.
    if (block_m == 192 && problem.shape.layout == detail::GemmLayout::Contiguous) continue;
    const int max_block_n = block_m == 64 ? kMaxBlockN64 : block_m == 128 ? kMaxBlockN128 : kMaxBlockN192;
    // Each warpgroup's share of BLOCK_N is a multiple of 8.
    const int step = block_m == 64 ? 16 : block_m == 128 ? 8 : 32;
    std::vector<int> block_ns;
    for (int block_n = step; block_n <= max_block_n; block_n += step) block_ns.push_back(block_n);
    if (block_m == 128 && !problem.shape.has_c && !problem.shape.output_f32) block_ns.push_back(kHalvesBlockN);
    for (int block_n : block_ns) {
      for (auto [cluster_m, cluster_n] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}}) {
        if (!with_clusters && cluster_m * cluster_n > 1) continue;
        KernelConfig config;
        config.shape = problem.shape;
        config.block_m = block_m;
        config.block_n = block_n;
        config.cluster_m = cluster_m;
        config.cluster_n = cluster_n;
        config.output_bytes = problem.shape.output_f32 ? 4 : 2;
        config.output_f16 = problem.shape.output_f16;
        config.c_bytes = problem.shape.c_of_d_type ? 2 : 4;
        config.num_sms = device.num_sms;
        // A shared operand is split into per-CTA slices of whole 8-row swizzle atoms.
        if (config.slice_rows_a() % 8 != 0 || config.slice_rows_b() % 8 != 0) continue;
        if (!sm90::block_scaled::spans_at_most_two_scale_blocks(config)) continue;
        int stages = most_stages(config, device);
        if (stages < 2) continue;
        const bool many_waves = waves_of(problem, config, device) > kMaxWavesForFourStagesOfHalves;
        if (config.column_halves() == 2 && many_waves) stages = std::min(stages, 3);
        config.num_stages = stages;
        configs.push_back(config);
      }
    }
  }
  return configs;
}

// Time = the larger of (a) the busiest SM's work, cluster tiles being dealt out in waves of num_sms CTAs,
// each tile costing per K block (of a split's share, with split-K) the slower of its MMAs and its loads (a
// multicast operand counts once per cluster), plus a fixed, an epilogue and a split-K reduction cost; and (b)
// the problem's unique bytes at DRAM bandwidth.
double fp8_cost(const ProblemSize& problem, const KernelConfig& config, const DeviceLimits& device) {
  const std::int64_t m = std::max<std::int64_t>(problem.m, 1);
  const std::int64_t n = problem.shape.n, k = problem.shape.k;
  const std::int64_t waves = waves_of(problem, config, device);
  const std::int64_t k_blocks = tile_k_blocks(problem, config);

  const double store = double(config.block_m) * config.block_n * config.output_bytes / kStoreBytesPerCycle;
  const bool two_scale_blocks = 128 % config.mma_n() != 0;
  const bool split_n = config.warpgroup_cols() == 2 && problem.shape.layout != detail::GemmLayout::Masked;
  const double overhead = config.two_partials() && split_n ? kKBlockOverheadCyclesSplitN
                          : config.two_partials()               ? kKBlockOverheadCyclesTwoPartials
                          : config.num_math_warpgroups() == 3 ? kKBlockOverheadCycles3
                                                              : kKBlockOverheadCycles;
  const double two_scale_blocks_cycles = two_scale_blocks ? kTwoScaleBlocksCycles * config.mma_n() : 0.0;
  const double k_block = mma_or_load_cycles(problem, config) + overhead + two_scale_blocks_cycles;
  const double tile =
      k_blocks * k_block + store + kTileOverheadCycles + split_k_cycles(problem, config) + c_ring_cycles(config);
  const double compute_bound = double(waves) * tile;

  const double dram_bytes = double(problem.num_groups) * (double(m) * k + double(n) * k) +
                            double(problem.num_groups) * m * n * config.output_bytes *
                                epilogue_d_passes(problem.shape);
  const double memory_bound = dram_cycles(dram_bytes, kDramBytesPerCycle);
  return std::max(compute_bound, memory_bound);
}

void keep_row_blocks_candidates(const ProblemSize& problem, std::vector<KernelConfig>& configs) {
  // The promotion keeps one or two partial accumulators beside the FP32 one (row_blocks_plan.cuh): at most 128
  // columns per warpgroup. No split-K.
  // Where the helper warp copies the scales, ptxas spilled tiles of other widths than 32, 64, 96, 128 or 160.
  const bool helper_copies_scales = !problem.shape.sfa_by_tma;
  // Warpgroups of a multiple of 16 columns: on an H100, 128 x 120, 104 and 88 tiles were 5-10% slower than
  // 128 x 112 and 96 on the shapes timed.
  const auto unsuited = [&](const KernelConfig& c) {
    return c.warpgroup_n() > sm90::row_blocks::kMaxWarpgroupN || c.warpgroup_n() % 16 != 0 ||
           (helper_copies_scales && (c.block_n % 32 != 0 || c.block_n > 160)) ||
           (problem.shape.c_in_d && c.warpgroup_n() * c.output_bytes % kLineBytes != 0);
  };
  configs.erase(std::remove_if(configs.begin(), configs.end(), unsuited), configs.end());
  // In the k-grouped layout with the helper warp, ptxas spilled 12-20 bytes of a ring that holds all of C's
  // chunks (no refill orders the epilogue's reads of them), and none of a ring of half of them in the same memory.
  if (problem.shape.layout == detail::GemmLayout::KGrouped && helper_copies_scales)
    for (KernelConfig& config : configs)
      if (config.c_slots > 1 && config.c_slots == config.c_chunks()) config.c_slots = config.c_chunks() / 2;
  // A tile whose rings were all of a size now.
  const auto same = [](const KernelConfig& a, const KernelConfig& b) { return a.name() == b.name(); };
  configs.erase(std::unique(configs.begin(), configs.end(), same), configs.end());
  // With two partials the K blocks alternate between them, whose parity the k-grouped K loop keeps by its stages.
  for (KernelConfig& config : configs) config.num_stages -= config.num_stages % stages_unit(config);
  // Three math warpgroups of 128 columns fill their 160 registers: with a fourth stage (16-bit D) ptxas spilled 24-32
  // bytes of the normal layout's kernels, with three none.
  for (KernelConfig& config : configs)
    if (sm90::row_blocks::three_of_128_columns(config))
      config.num_stages = std::min(config.num_stages, kMaxRowBlocksStagesThreeOf128);
  configs.erase(std::remove_if(configs.begin(), configs.end(),
                               [](const KernelConfig& c) {
                                 return c.num_stages < (c.two_partials() ? kMinRowBlocksStages : kMinRowBlocksStages3);
                               }),
                configs.end());
}

// The 1D1D recipe's time: as the block recipe's, with its promotion in each K block, and a K block taking at
// least the latency of a load, grown by the DRAM's utilization, over the stages loading meanwhile. The
// utilization is the unique bytes' share of the time, which itself depends on it: the time is the root of
// time = waves * tile(time), found by bisection (a tile's time falls as the time grows).
double row_blocks_cost(const ProblemSize& problem, const KernelConfig& config, const DeviceLimits& device) {
  const std::int64_t m = std::max<std::int64_t>(problem.m, 1);
  const std::int64_t n = problem.shape.n;
  const bool k_grouped = problem.shape.layout == detail::GemmLayout::KGrouped;
  // A and B are read once whatever the layout: k-grouped, each expert's K of the M and N rows.
  const double operand_k = double(k_grouped ? problem.k_per_group * problem.num_groups : problem.shape.k);
  const double waves = double(waves_of(problem, config, device));
  const double k_blocks = double(tile_k_blocks(problem, config));
  const double elements = double(config.block_m) * config.block_n;

  const double promotion = kRowBlocksPromotionUnhidden * elements * 2 / kFp32OpsPerCycle;
  const double k_block = mma_or_load_cycles(problem, config) + (config.two_partials()
                                                                    ? promotion + kRowBlocksKBlockOverheadCycles
                                                                    : kRowBlocksKBlockOverheadCycles3);
  // Where C is D, the TMA store reads each element of D before it writes it.
  const double d_passes = problem.shape.c_in_d ? 2 : 1;
  const double store = elements * config.output_bytes * d_passes / kStoreBytesPerCycle;
  const double tile_fixed = store + kTileOverheadCycles + c_ring_cycles(config);
  const double dram_bytes = (double(m) + double(n)) * operand_k + double(problem.num_groups) * m * n *
                                                                      config.output_bytes *
                                                                      (d_passes + (problem.shape.has_c ? 1 : 0));
  const double memory_bound = dram_cycles(dram_bytes, kDramBytesPerCycle);

  const double stages_held = config.two_partials() ? 2 : 1 + kRowBlocksPromotionHoldsStage3;
  const double loading_stages = std::max(config.num_stages - stages_held, 1.0);
  const auto time_of_tiles = [&](double time) {
    const double utilization = std::min(memory_bound / time, kMaxDramUtilization);
    const double latency = kIdleDramLoadLatencyCycles / (1 - utilization) / loading_stages;
    return waves * (k_blocks * std::max(k_block, latency) + tile_fixed);
  };
  double low = std::max(waves * (k_blocks * k_block + tile_fixed), memory_bound);
  double high = time_of_tiles(low);
  if (high <= low) return low;
  for (int step = 0; step < 40; ++step) {
    const double middle = (low + high) / 2;
    (time_of_tiles(middle) > middle ? low : high) = middle;
  }
  return high;
}

bool fp8_only_when_forced(const ProblemSize& problem, const KernelConfig& config) {
  return config.column_halves() == 2 && (problem.m < kHalvesMinM || problem.shape.k < kHalvesMinK);
}

}  // namespace fgemm::cuda
