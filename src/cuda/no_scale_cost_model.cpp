// The candidate tiles and cost model of the GEMMs whose K loop has no promotion (cost_model.hpp): BF16 and FP16
// into FP32 accumulators, INT8 into INT32 (its scales, if any, applied once in the epilogue). A K block is its
// MMAs, so the model is FP8's machine model with a smaller per-block overhead, at half FP8's tensor-core rate
// for the 16-bit types and at FP8's for INT8.
#include <algorithm>

#include "cuda/cost_model.hpp"
#include "fgemm/common.cuh"

namespace fgemm::cuda {
namespace {

constexpr double kMmaFlopsPerCycle = 4096;       // dense BF16/FP16 wgmma throughput of one SM
constexpr double kSmLoadBytesPerCycle = 72;      // one SM's share of L2-to-SM bandwidth
// Per K block, what the MMAs do not hide: the stage's barrier round trip and the wait for the block's MMAs
// before the stage is released (the other math warpgroups' MMAs run meanwhile).
constexpr double kKBlockOverheadCycles = 150;
// The least time of a K block on a device whose DRAM outpaces the fit: one warpgroup's chain of the full barrier's
// wait, the block's wgmmas and the stage's release, which narrow tiles cannot hide behind their loads. On an H200,
// 1 x 2112 x 7168 took 309 cycles per K block in 64 x 16 and in 64 x 32 tiles alike (docs/PERFORMANCE.md).
constexpr double kKBlockChainCycles = 300;
constexpr double kTileOverheadCycles = 2000;  // per tile: epilogue latency, pipeline refill
constexpr double kStoreBytesPerCycle = 64;    // TMA store of D from one SM
// The math threads hold only the accumulators: a warpgroup's 64 x 256 FP32 (128 registers) fits the 232 of two
// math warpgroups; three (BLOCK_M 192) get 152, for up to 128 columns.
constexpr int kMaxWarpgroupN = 256;
constexpr int kMaxBlockN192 = 128;
// An MN-major operand is loaded in boxes of a run of M or N, 64 elements or, where a tile's extents are not whole
// runs of 64, 32 (TileConfig::mn_major_run_a/b).
constexpr int kMnMajorShortestRun = 32;

}  // namespace

std::vector<KernelConfig> no_scale_candidates(const ProblemSize& problem, const DeviceLimits& device,
                                              bool with_clusters) {
  const KernelShape& shape = problem.shape;
  std::vector<KernelConfig> configs;
  for (int block_m : {64, 128, 192}) {
    // 192-row tiles would span two experts' 128-aligned segments of the contiguous layout.
    if (block_m == 192 && shape.layout == detail::GemmLayout::Contiguous) continue;
    const int warpgroup_cols = block_m == 64 ? 2 : 1;
    const int max_block_n = block_m == 192 ? kMaxBlockN192 : kMaxWarpgroupN;
    // Each warpgroup's columns are a valid wgmma N (a multiple of 8), whole boxes where B is MN-major.
    const int warpgroup_step = shape.b_mn_major ? kMnMajorShortestRun : 8;
    for (int block_n = warpgroup_step * warpgroup_cols; block_n <= max_block_n;
         block_n += warpgroup_step * warpgroup_cols) {
      for (auto [cluster_m, cluster_n] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}}) {
        if (!with_clusters && cluster_m * cluster_n > 1) continue;
        KernelConfig config;
        config.shape = shape;
        config.block_m = block_m;
        config.block_n = block_n;
        config.cluster_m = cluster_m;
        config.cluster_n = cluster_n;
        config.operand_bytes = static_cast<int>(dtype_size(shape.ab_dtype));
        config.output_bytes = shape.output_f32 ? 4 : 2;
        config.output_f16 = shape.output_f16;
        config.c_bytes = shape.c_of_d_type ? 2 : 4;
        config.num_sms = device.num_sms;
        // A shared operand is split into per-CTA slices of whole swizzle atoms (8 rows K-major, a box MN-major).
        const int slice_unit_a = shape.a_mn_major ? kMnMajorShortestRun : 8;
        const int slice_unit_b = shape.b_mn_major ? kMnMajorShortestRun : 8;
        if (config.slice_rows_a() % slice_unit_a != 0 || config.slice_rows_b() % slice_unit_b != 0) continue;
        config.num_stages = most_stages(config, device);
        if (config.num_stages < 2) continue;
        configs.push_back(config);
      }
    }
  }
  return configs;
}

// As FP8's model (fp8_cost_model.cpp): the larger of the busiest SM's tiles, each K block costing the slower
// of its MMAs and its loads plus the overhead, and the problem's unique bytes at DRAM bandwidth.
double no_scale_cost(const ProblemSize& problem, const KernelConfig& config, const DeviceLimits& device) {
  const std::int64_t m = std::max<std::int64_t>(problem.m, 1);
  const std::int64_t n = problem.shape.n;
  const bool k_grouped = problem.shape.layout == detail::GemmLayout::KGrouped;
  const std::int64_t k = std::max<std::int64_t>(k_grouped ? problem.k_per_group : problem.shape.k, 1);
  const std::int64_t waves = waves_of(problem, config, device);
  const std::int64_t k_blocks = tile_k_blocks(problem, config);

  // INT8's tensor cores multiply twice as many of their one-byte values per cycle.
  const double mma =
      double(config.block_m) * config.block_n * config.block_k() * 2 / (kMmaFlopsPerCycle * 2 / config.operand_bytes);
  const double rows_a = double(std::min<std::int64_t>(m, config.block_m)) / config.cluster_n;
  const double rows_b = double(config.block_n) / config.cluster_m;
  const double row_bytes = double(config.block_k()) * config.operand_bytes;
  const double load = (rows_a + rows_b) * row_bytes / kSmLoadBytesPerCycle;
  const double store = double(config.block_m) * config.block_n * config.output_bytes / kStoreBytesPerCycle;
  // The stages loading while the math multiplies one bring a K block per kLoadLatencyCycles / (stages - 1).
  const double latency_bound = kLoadLatencyCycles / std::max(config.num_stages - 1, 1);
  const double chain = dram_outpaces_the_fit(device) ? kKBlockChainCycles : 0.0;
  const double k_block = std::max({std::max(mma, load) + kKBlockOverheadCycles, latency_bound, chain});
  const double tile =
      k_blocks * k_block + store + kTileOverheadCycles + split_k_cycles(problem, config) + c_ring_cycles(config);
  const double compute_bound = double(waves) * tile;

  const double dram_bytes = double(problem.num_groups) * (double(m) * k + double(n) * k) * config.operand_bytes +
                            double(problem.num_groups) * m * n * config.output_bytes *
                                epilogue_d_passes(problem.shape);
  const double memory_bound = dram_cycles(dram_bytes, device.dram_bytes_per_cycle);
  return std::max(compute_bound, memory_bound);
}

}  // namespace fgemm::cuda
