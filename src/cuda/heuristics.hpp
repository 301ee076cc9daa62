// Chooses the kernel configuration of a GEMM from its shape and the device, deterministically.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda/kernel_config.hpp"

namespace fgemm::cuda {

// DRAM bytes per SM clock cycle of the H100 SXM the cost models were fitted on.
constexpr double kFittedDramBytesPerCycle = 1700;

// The decode regime: the normal layout with at most two 64-row tiles of M. There the block recipe's candidates
// (FP8 and INT8) all meet the DRAM bound and tie (heuristics.cpp, cheapest), its 64-row tiles take alternate K
// blocks, and accumulation in place keeps the reduction store (gemm_sm90.cpp).
constexpr std::int64_t kDecodeMaxM = 128;

struct DeviceLimits {
  int num_sms = 132;
  int max_smem_per_block = 232448;  // H100/H200: 227 KiB of opt-in dynamic shared memory
  // The peak DRAM bandwidth of the whole chip in bytes per SM clock cycle, for the 16-bit kinds' cost model: the
  // figure the models were fitted with on an H100 SXM (HBM3, 3.35 TB/s at 1.98 GHz), or a faster device's own
  // (gemm_device_limits: an H200's HBM3e moves 4.8 TB/s).
  double dram_bytes_per_cycle = kFittedDramBytesPerCycle;
};

// The rows the kernel should be tuned for: M for the normal layout, expected_m for masked; the tiles of
// num_groups such problems.
struct ProblemSize {
  std::int64_t m = 0;
  std::int64_t num_groups = 1;
  KernelShape shape;
  // K-grouped: the experts' mean K, for the cost model (the kernel itself takes any K; shape.k is 0).
  std::int64_t k_per_group = 0;
};

// Every configuration the kernel supports for this problem, with the most stages that fit: single CTAs, and
// only when asked clusters of two CTAs sharing an operand by multicast, and the single CTAs' split-K variants
// (normal and masked layouts). Measured on an H100, clusters are not faster than single CTAs yet where the
// heuristics would choose them, and split-K only for the 16-bit kinds' shapes of few tiles (docs/PERFORMANCE.md):
// choose_config weighs those splits alone. With a C of its own, each tile comes with the rings of C that gain it
// a stage or a round of refills, or, where `c_slots` is not 0 (a forced ring), with a ring of that many chunks.
std::vector<KernelConfig> candidate_configs(const ProblemSize& problem, const DeviceLimits& device,
                                            bool with_clusters = false, bool with_split_k = false, int c_slots = 0);

// A cost estimate (arbitrary units, lower is faster) of one configuration, by its kind's model (cost_model.hpp).
double estimated_cost(const ProblemSize& problem, const KernelConfig& config, const DeviceLimits& device);

// A tile shape (and cluster shape, unless 0) imposed for tuning; block_m == 0 lets the heuristics choose.
// split_k: the CTAs sharing each tile's K (split-K, with the heuristics' tile where none is imposed), or 0 for
// none.
struct BlockShape {
  int block_m = 0;
  int block_n = 0;
  int cluster_m = 0;
  int cluster_n = 0;
  int split_k = 0;
  int c_slots = 0;     // chunks in each ring of C (0: the heuristics' choice)
  int num_stages = 0;  // stages of the chosen tile (0: the most that fit)

  bool forces_nothing() const {
    return block_m == 0 && block_n == 0 && cluster_m == 0 && cluster_n == 0 && split_k == 0 && c_slots == 0 &&
           num_stages == 0;
  }
};

// The candidate with the least estimated cost (ties: the larger tile), or the candidate of the forced
// shape (fgemm::Error(InvalidValue) if there is none); its grid is at most one cluster per cluster tile. A forced
// tile is never split unless split_k is forced too. Forced stages replace the chosen kernel's, where they fit
// (fgemm::Error(InvalidValue) otherwise).
KernelConfig choose_config(const ProblemSize& problem, const DeviceLimits& device, BlockShape forced = {});

// Every configuration choose_config picks for M (the masked layout: expected_m) from m_min to m_max, each
// once, in the order of the first M that picks it: the kernels a warm-up compiles for that range.
std::vector<KernelConfig> configs_for_m_range(ProblemSize problem, std::int64_t m_min, std::int64_t m_max,
                                              const DeviceLimits& device, BlockShape forced = {});

}  // namespace fgemm::cuda
