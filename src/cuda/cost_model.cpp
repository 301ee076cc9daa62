// The machine model the kinds' cost models share (cost_model.hpp): tiles, waves and clusters, K blocks, DRAM,
// split-K's reduction and the ring of C, and the estimate of a candidate by its kind's model.
#include "cuda/cost_model.hpp"

#include <algorithm>

#include "fgemm/common.cuh"

namespace fgemm::cuda {

namespace {

// The CTAs of a cluster run in one GPC, of 16 to 18 SMs on an H100: clusters of more than two CTAs are counted
// as if every GPC had 16 SMs (the launcher asks the driver for the exact number).
constexpr int kGpcSms = 16;
// A split-K reduction's cost, which ranks the tiles of a split: fixed (the epilogue's row stores in place of
// the TMA's, the launch of larger clusters), per CTA of the cluster (its barrier round trips, one after
// another), and its rate: every peer pushes its FP32 sums of each CTA's share of the tile into that CTA's shared
// memory. On an H100, one 64 x 144 tile of 7168 FP8 K took 19.8 us in one CTA, 16.7, 13.0 and 12.4 us split 2, 4
// and 8 ways; narrow BF16 tiles of 7168 K split in two and four took 5-7 us more than their share of the K loop
// (docs/PERFORMANCE.md). Fitted before split-K's exit barrier and reduction lost their cluster-scope fences (about
// 4,000 cycles of a split kernel), the fixed cost overstates today's.
constexpr double kSplitKFixedCycles = 10000;
constexpr double kSplitKCyclesPerCta = 700;
constexpr double kDistributedSmemBytesPerCycle = 32;

}  // namespace

std::int64_t cluster_tiles(const ProblemSize& problem, const KernelConfig& config) {
  const std::int64_t m_blocks = ceil_div(std::max<std::int64_t>(problem.m, 1), config.block_m);
  const std::int64_t n_blocks = ceil_div(problem.shape.n, config.block_n);
  return problem.num_groups * ceil_div(m_blocks, config.cluster_m) * ceil_div(n_blocks, config.cluster_n);
}

std::int64_t max_clusters(const KernelConfig& config, const DeviceLimits& device) {
  const int size = config.cluster_size();
  const int clusters = size <= 2 ? device.num_sms / size : device.num_sms / kGpcSms * (kGpcSms / size);
  return std::max(clusters, 1);
}

std::int64_t waves_of(const ProblemSize& problem, const KernelConfig& config, const DeviceLimits& device) {
  return ceil_div(cluster_tiles(problem, config), max_clusters(config, device));
}

std::int64_t tile_k_blocks(const ProblemSize& problem, const KernelConfig& config) {
  const bool k_grouped = problem.shape.layout == detail::GemmLayout::KGrouped;
  const std::int64_t k = std::max<std::int64_t>(k_grouped ? problem.k_per_group : problem.shape.k, 1);
  return ceil_div(k, config.block_k()) / config.split_k;
}

double dram_cycles(double bytes, double bytes_per_cycle) { return bytes / bytes_per_cycle; }

bool dram_outpaces_the_fit(const DeviceLimits& device) {
  return device.dram_bytes_per_cycle > kFittedDramBytesPerCycle;
}

double epilogue_d_passes(const KernelShape& shape) {
  if (!shape.reads_c()) return 1.0;
  return shape.c_of_d_type ? 2.0 : 3.0;
}

double split_k_cycles(const ProblemSize& problem, const KernelConfig& config) {
  if (config.split_k == 1) return 0.0;
  const double rows = double(std::min<std::int64_t>(std::max<std::int64_t>(problem.m, 1), config.block_m));
  return kSplitKFixedCycles + kSplitKCyclesPerCta * config.split_k +
         rows * config.block_n * 4 / kDistributedSmemBytesPerCycle;
}

int most_stages(KernelConfig config, const DeviceLimits& device) {
  int stages = 0;
  for (config.num_stages = 1; config.num_stages <= kMaxStages; ++config.num_stages) {
    if (config.smem_bytes() > device.max_smem_per_block) break;
    stages = config.num_stages;
  }
  return stages;
}

int stages_unit(const KernelConfig& config) {
  if (config.alternate_k_blocks) return kAlternationUnit;
  return config.shape.layout == detail::GemmLayout::KGrouped && config.two_partials() ? 2 : 1;
}

int c_ring_refill_rounds(const KernelConfig& config) {
  const int streamed = config.c_chunks() - config.c_slots;
  return streamed > 0 ? ceil_div(streamed, config.c_slots) : 0;
}

double c_ring_cycles(const KernelConfig& config) {
  return config.c_slots == 0 ? 0.0 : c_ring_refill_rounds(config) * kLoadLatencyCycles;
}

double estimated_cost(const ProblemSize& problem, const KernelConfig& config, const DeviceLimits& device) {
  if (config.shape.scaling == detail::Scaling::RowBlocks) return row_blocks_cost(problem, config, device);
  return config.block_scaled() ? fp8_cost(problem, config, device) : no_scale_cost(problem, config, device);
}

}  // namespace fgemm::cuda
