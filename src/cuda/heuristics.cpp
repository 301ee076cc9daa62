#include "cuda/heuristics.hpp"

#include <algorithm>
#include <string>

#include "cuda/cost_model.hpp"
#include "fgemm/common.cuh"
#include "fgemm/error.hpp"

namespace fgemm::cuda {

// Cluster tiles (one tile per CTA of a cluster) of the problem.
std::int64_t cluster_tiles(const ProblemSize& problem, const KernelConfig& config) {
  const std::int64_t m_blocks = ceil_div(std::max<std::int64_t>(problem.m, 1), config.block_m);
  const std::int64_t n_blocks = ceil_div(problem.shape.n, config.block_n);
  return problem.num_groups * ceil_div(m_blocks, config.cluster_m) * ceil_div(n_blocks, config.cluster_n);
}

// Rounds of cluster tiles the grid takes, one cluster per num_sms / cluster_size SMs.
std::int64_t waves_of(const ProblemSize& problem, const KernelConfig& config, const DeviceLimits& device) {
  const std::int64_t clusters_per_wave = std::max(device.num_sms / config.cluster_size(), 1);
  return ceil_div(cluster_tiles(problem, config), clusters_per_wave);
}

int most_stages(KernelConfig config, const DeviceLimits& device) {
  int stages = 0;
  for (config.num_stages = 1; config.num_stages <= kMaxStages; ++config.num_stages) {
    if (config.smem_bytes() > device.max_smem_per_block) break;
    stages = config.num_stages;
  }
  return stages;
}

std::vector<KernelConfig> candidate_configs(const ProblemSize& problem, const DeviceLimits& device,
                                            bool with_clusters) {
  return problem.shape.ab_dtype == DType::E4M3 ? fp8_candidates(problem, device, with_clusters)
                                               : no_scale_candidates(problem, device, with_clusters);
}

double estimated_cost(const ProblemSize& problem, const KernelConfig& config, const DeviceLimits& device) {
  return config.scaled() ? fp8_cost(problem, config, device) : no_scale_cost(problem, config, device);
}

KernelConfig choose_config(const ProblemSize& problem, const DeviceLimits& device, BlockShape forced) {
  const auto configs = candidate_configs(problem, device, forced.cluster_m != 0);
  // Ties go to the larger tile (counting only rows the problem has), then to no cluster.
  const auto useful_area = [&](const KernelConfig& c) {
    return std::min<std::int64_t>(c.block_m, problem.m) * c.block_n;
  };
  const KernelConfig* best = nullptr;
  double best_cost = 0;
  for (const auto& config : configs) {
    if (forced.block_m != 0 && (config.block_m != forced.block_m || config.block_n != forced.block_n)) continue;
    if (forced.cluster_m != 0 && (config.cluster_m != forced.cluster_m || config.cluster_n != forced.cluster_n))
      continue;
    if (forced.block_m == 0 && config.scaled() && fp8_only_when_forced(problem, config)) continue;
    const double cost = estimated_cost(problem, config, device);
    const bool better_tie = best && useful_area(config) > useful_area(*best);
    if (!best || cost < best_cost * (1 - 1e-9) || (cost <= best_cost * (1 + 1e-9) && better_tie)) {
      best = &config;
      best_cost = cost;
    }
  }
  if (!best)
    throw Error(ErrorKind::InvalidValue,
                forced.block_m ? "fgemm: the forced tile " + std::to_string(forced.block_m) + "x" +
                                     std::to_string(forced.block_n) + " (cluster " + std::to_string(forced.cluster_m) +
                                     "x" + std::to_string(forced.cluster_n) + ") is not a supported configuration"
                               : std::string("fgemm: no kernel configuration fits the device's shared memory"));
  KernelConfig chosen = *best;
  // The grid: whole clusters, no more than there are cluster tiles, or every SM for the masked layout,
  // whose tile count is known only on the device (masked_m).
  const std::int64_t max_clusters = device.num_sms / chosen.cluster_size();
  const std::int64_t clusters = problem.shape.layout == detail::GemmLayout::Masked
                                    ? max_clusters
                                    : std::min(cluster_tiles(problem, chosen), max_clusters);
  chosen.num_sms = static_cast<int>(clusters * chosen.cluster_size());
  return chosen;
}

std::vector<KernelConfig> configs_for_m_range(ProblemSize problem, std::int64_t m_min, std::int64_t m_max,
                                              const DeviceLimits& device, BlockShape forced) {
  std::vector<KernelConfig> configs;
  std::vector<std::string> names;
  for (std::int64_t m = m_min; m <= m_max; ++m) {
    problem.m = m;
    KernelConfig config = choose_config(problem, device, forced);
    std::string name = config.name();
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    names.push_back(std::move(name));
    configs.push_back(config);
  }
  return configs;
}

}  // namespace fgemm::cuda
