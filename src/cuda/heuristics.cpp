#include "cuda/heuristics.hpp"

#include <algorithm>
#include <cmath>

#include "fgemm/error.hpp"

namespace fgemm::cuda {
namespace {

// A simple machine model of one Hopper SM, in cycles, good enough to rank tilings:
constexpr double kMmaFlopsPerCycle = 8192;     // dense FP8 wgmma throughput of one SM
constexpr double kSmLoadBytesPerCycle = 48;    // what one SM's TMA sustains from L2 and DRAM
constexpr double kChipDramBytesPerCycle = 1700;  // HBM3 bandwidth of the whole chip
constexpr double kKBlockOverheadCycles = 48;   // barrier waits and wgmma issue per K block
constexpr double kTileOverheadCycles = 600;    // per tile: scale set-up, epilogue latency, pipeline refill
constexpr double kStoreBytesPerCycle = 64;     // TMA store of D from one SM
constexpr int kMaxStages = 16;
// BLOCK_M 128 keeps two 64 x BLOCK_N FP32 accumulators per thread: past 160 columns they no longer fit in
// the 232 registers a math thread gets. With BLOCK_M 64 each warpgroup holds half of BLOCK_N.
constexpr int kMaxBlockN128 = 160;
// Adding C loads a tile of it into registers next to the accumulators.
constexpr int kMaxBlockN128WithC = 128;
constexpr int kMaxBlockN64 = 256;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::vector<KernelConfig> candidate_configs(const ProblemSize& problem, const DeviceLimits& device) {
  std::vector<KernelConfig> configs;
  for (int block_m : {64, 128}) {
    const int max_block_n =
        block_m == 64 ? kMaxBlockN64 : problem.shape.has_c ? kMaxBlockN128WithC : kMaxBlockN128;
    const int step = block_m == 64 ? 16 : 8;  // each warpgroup's share of BLOCK_N is a multiple of 8
    for (int block_n = step; block_n <= max_block_n; block_n += step) {
      KernelConfig config;
      config.shape = problem.shape;
      config.block_m = block_m;
      config.block_n = block_n;
      config.num_sms = device.num_sms;
      int stages = 0;
      while (stages < kMaxStages &&
             smem_bytes_for(block_m, block_n, stages + 1, problem.shape.output_f32) <= device.max_smem_per_block)
        ++stages;
      if (stages < 2) continue;
      config.num_stages = stages;
      configs.push_back(config);
    }
  }
  return configs;
}

// Time = the larger of (a) the busiest SM's work, tiles being dealt out in waves of num_sms, each tile
// costing per K block the slower of its MMAs and its loads, plus a fixed and an epilogue cost; and
// (b) the whole problem's unique bytes at DRAM bandwidth.
double estimated_cost(const ProblemSize& problem, const KernelConfig& config, const DeviceLimits& device) {
  const std::int64_t m = std::max<std::int64_t>(problem.m, 1);
  const std::int64_t n = problem.shape.n, k = problem.shape.k;
  const std::int64_t tiles = problem.num_groups * ceil_div(m, config.block_m) * ceil_div(n, config.block_n);
  const std::int64_t waves = ceil_div(tiles, device.num_sms);
  const std::int64_t k_blocks = ceil_div(k, KernelConfig::kBlockK);

  const double mma = double(config.block_m) * config.block_n * KernelConfig::kBlockK * 2 / kMmaFlopsPerCycle;
  // TMA fetches no rows past the end of A, so a small M loads only its own rows.
  const double rows_loaded = double(std::min<std::int64_t>(m, config.block_m) + config.block_n);
  const double load = rows_loaded * KernelConfig::kBlockK / kSmLoadBytesPerCycle;
  const double store = double(config.block_m) * config.block_n * config.output_bytes() / kStoreBytesPerCycle;
  const double tile = k_blocks * (std::max(mma, load) + kKBlockOverheadCycles) + store + kTileOverheadCycles;
  const double compute_bound = double(waves) * tile;

  const double dram_bytes = double(problem.num_groups) * (double(m) * k + double(n) * k) +
                            double(problem.num_groups) * m * n * config.output_bytes() * (problem.shape.has_c ? 3 : 1);
  const double memory_bound = dram_bytes / kChipDramBytesPerCycle;
  return std::max(compute_bound, memory_bound);
}

KernelConfig choose_config(const ProblemSize& problem, const DeviceLimits& device, BlockShape forced) {
  const auto configs = candidate_configs(problem, device);
  const KernelConfig* best = nullptr;
  double best_cost = 0;
  for (const auto& config : configs) {
    if (forced.block_m != 0 && (config.block_m != forced.block_m || config.block_n != forced.block_n)) continue;
    const double cost = estimated_cost(problem, config, device);
    const bool larger_tile = best && config.block_m * config.block_n > best->block_m * best->block_n;
    if (!best || cost < best_cost * (1 - 1e-9) || (cost <= best_cost * (1 + 1e-9) && larger_tile)) {
      best = &config;
      best_cost = cost;
    }
  }
  if (!best)
    throw Error(ErrorKind::InvalidValue,
                forced.block_m ? "fgemm: the forced tile " + std::to_string(forced.block_m) + "x" +
                                     std::to_string(forced.block_n) + " is not a supported configuration"
                               : std::string("fgemm: no kernel configuration fits the device's shared memory"));
  KernelConfig chosen = *best;
  // Launch no more CTAs than there are tiles. The masked layout's tile count is known only on the device
  // (masked_m), so it takes every SM.
  if (problem.shape.layout == detail::GemmLayout::Masked) {
    chosen.num_sms = device.num_sms;
    return chosen;
  }
  const std::int64_t tiles = problem.num_groups * ceil_div(std::max<std::int64_t>(problem.m, 1), chosen.block_m) *
                             ceil_div(problem.shape.n, chosen.block_n);
  chosen.num_sms = static_cast<int>(std::min<std::int64_t>(tiles, device.num_sms));
  return chosen;
}

}  // namespace fgemm::cuda
