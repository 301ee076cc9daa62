#include "cuda/heuristics.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "cuda/cost_model.hpp"
#include "fgemm/error.hpp"

namespace fgemm::cuda {

namespace {

// Shares of busy SMs this close count as equal: over many waves every tile keeps nearly all of them busy, and the
// larger tile's wider loads win (1 x 7168 x 16384 on an H100: 60.3 µs in 64 x 32 tiles, 52.7 in 64 x 128).
constexpr double kDecodeBusyShareTie = 0.05;

// In the decode regime a chosen 64-row tile's two math warpgroups take alternate K blocks over all of its columns
// where they can (TileConfig::alternate_k_blocks: no cluster, no split, no ring of C, the K blocks and the stages
// multiples of four, and one wgmma's width of columns), each then running half of the K blocks' chains that bound
// such narrow tiles (docs/PERFORMANCE.md). The 16-bit kinds' decode tiles, which move twice the bytes per element,
// ran no faster alternating on an H100 (within 1% on the 32 rows of M <= 128); on an H200, whose DRAM leaves more
// of them bound by those chains, 64 x 32 tiles of 32 K blocks or more ran 1-5% faster alternating (128 x 2112 x
// 7168 BF16: 18.0 -> 17.4 us), of 8 K blocks 2-3% slower (the sums' hand-over is paid once a tile), and 64 x 64
// tiles up to 5% slower, so the 16-bit kinds alternate in tiles of at most 32 columns and at least 32 K blocks.
constexpr int kMaxAlternatingBlockN = 64;
constexpr int kMaxAlternatingBlockNSixteenBit = 32;
constexpr int kMinAlternatingKBlocksSixteenBit = 32;

// Whether the heuristics weigh split-K on their own (where no tile or split is forced): the 16-bit kinds in
// the normal layout, where the best single-CTA tiling leaves a third of the SMs or more idle. On an H100 such
// shapes ran up to 1.5x faster split in two or four (M = 1 or 128, N = 256 or 576, K = 7168), while shapes
// whose tiles filled the GPU ran slower split, whatever the tile (docs/PERFORMANCE.md); FP8's decode shapes
// did not gain, and INT8's were not measured. A split tile's fixed cost is large (cost_model.cpp), so
// only splits whose clusters all run at once are weighed: at most 30 clusters of four on an H100's 132 SMs (the
// driver's count; its GPCs do not all hold 16 SMs), where 32 of them ran 1.6x slower than 16 of twice the width.
// On a device whose DRAM outpaces the fit (dram_outpaces_the_fit), splits are weighed too where at most
// kDecodeMaxM rows take tiles of at most kChainBoundMaxBlockN columns, whose K loop is bound by each block's chain
// of barrier wait, wgmma and release (the cost model's kKBlockChainCycles), not by their few bytes: on an H200,
// 1 x 2112 x 7168 took 17.5 us in 64 x 16 tiles on all 132 SMs and 14.0 in 64 x 80 split four; wider tiles on all
// SMs ran 4-11% slower split. On an H100 (before split-K's fences were cut) that shape ran 18.9 us unsplit and 20.5
// at best split (docs/PERFORMANCE.md). Eight-way splits are weighed where their CTAs take at most half the SMs:
// on an H200, a tile split in eight ran 1.14-1.30x faster than split in four wherever it took up to 64 CTAs
// (128 x 256 x 7168 into FP32: 8.2 us in 64 x 64 tiles against 9.0 in the 64 x 32 split four), but 6-18% slower
// on 72 or 96 CTAs than the same tile and split on half as many, where four-way splits ran as fast on 96 CTAs as
// on 48 (128 x 576 x 7168: 64 x 96 split eight 10.6 us, 64 x 48 split four 9.7), which the model does not see.
constexpr double kSplitWhenSmsBusyBelow = 2.0 / 3.0;
constexpr double kSplitCtasOfSms = 0.9;
constexpr int kWideSplit = 8;
constexpr double kWideSplitCtasOfSms = 0.5;
constexpr int kChainBoundMaxBlockN = 16;

bool is_sixteen_bit(const ProblemSize& problem) {
  return problem.shape.ab_dtype == DType::BF16 || problem.shape.ab_dtype == DType::F16;
}

bool chooses_split_k(const ProblemSize& problem, BlockShape forced) {
  return forced.block_m == 0 && forced.split_k == 0 && is_sixteen_bit(problem) &&
         problem.shape.layout == detail::GemmLayout::Normal;
}

struct Cheapest {
  const KernelConfig* config = nullptr;  // null where no candidate is eligible
  double cost = 0;
};

// Whether the problem is in the decode regime of the block recipe, FP8's or INT8's (kDecodeMaxM).
bool in_decode_regime(const ProblemSize& problem) {
  const bool eight_bit = problem.shape.ab_dtype == DType::E4M3 || problem.shape.ab_dtype == DType::I8;
  return problem.shape.layout == detail::GemmLayout::Normal && problem.m <= kDecodeMaxM && eight_bit &&
         problem.shape.scaling == detail::Scaling::Block;
}

// Whether the problem is a 16-bit kind's decode shape: the normal layout with at most kDecodeMaxM rows.
bool in_sixteen_bit_decode(const ProblemSize& problem) {
  return is_sixteen_bit(problem) && problem.shape.layout == detail::GemmLayout::Normal && problem.m <= kDecodeMaxM;
}

// Whether a decode tile of the problem gains from alternate K blocks, by its kind, columns and K blocks.
bool alternation_pays(const ProblemSize& problem, const KernelConfig& config) {
  if (in_decode_regime(problem)) return config.block_n <= kMaxAlternatingBlockN;
  return in_sixteen_bit_decode(problem) && config.block_n <= kMaxAlternatingBlockNSixteenBit &&
         tile_k_blocks(problem, config) >= kMinAlternatingKBlocksSixteenBit;
}

// The chosen configuration with alternate K blocks, where its 64-row tile can take them and gains from them.
KernelConfig with_alternate_k_blocks(const ProblemSize& problem, KernelConfig config, const DeviceLimits& device) {
  if (config.block_m != 64 || !alternation_pays(problem, config) || config.cluster_size() != 1 ||
      config.c_slots != 0 || tile_k_blocks(problem, config) % kAlternationUnit != 0)
    return config;
  KernelConfig alternating = config;
  alternating.alternate_k_blocks = true;
  alternating.num_stages = most_stages(alternating, device);
  alternating.num_stages -= alternating.num_stages % stages_unit(alternating);
  return alternating.num_stages >= kAlternationUnit ? alternating : config;
}

// The 16-bit kinds' FP32 D, in one wave of tiles of the normal layout with at most kMostStagesToHalveFor stages:
// staged one column half at a time (TileConfig::staged_in_halves) where the shared memory that frees holds one more
// stage. On an H200, 576 x 4096 x 7168 TN into FP32 in place (192 x 96 tiles, one wave of 129) ran 54.5 -> 48.5 us
// with a fifth stage (0.91x -> 1.02x cuBLAS); FP8's 1D1D tiles into FP32, given halves and a stage more on every
// row, gained nothing in one wave and lost up to 6% in many (24576 x 4096 x 1536: 390 -> 413 us), where each tile
// pays the second pass (docs/PERFORMANCE.md). Tiles of more stages were not measured.
constexpr int kMostStagesToHalveFor = 4;
constexpr int kLeastHalvedChunkBytes = 64;

KernelConfig with_staging_halves(const ProblemSize& problem, KernelConfig config, const DeviceLimits& device) {
  if (!is_sixteen_bit(problem) || problem.shape.layout != detail::GemmLayout::Normal || config.output_bytes != 4 ||
      config.alternate_k_blocks || config.num_stages > kMostStagesToHalveFor ||
      cluster_tiles(problem, config) > max_clusters(config, device))
    return config;
  KernelConfig halved = config;
  halved.staged_in_halves = true;
  // Halves of rows narrower than the 64-byte swizzle would be stored in TMA boxes of 32 bytes a row: not measured.
  if (halved.staging_passes() == config.staging_passes() || halved.chunk_bytes() < kLeastHalvedChunkBytes)
    return config;
  halved.num_stages = most_stages(halved, device);
  return halved.num_stages > config.num_stages ? halved : config;
}

// A forced stage count, for measuring: at least four (the schedules that hold two stages at once, as the 1D1D
// recipe's with two partials, are never chosen with fewer), at most what the chosen kernel holds (the most that
// fit its shared memory), and a multiple of its stages_unit.
constexpr int kMinForcedStages = 4;

// The chosen configuration with the forced number of stages (0: its own), or fgemm::Error(InvalidValue) naming the
// stages it can take.
KernelConfig with_forced_stages(KernelConfig config, int stages) {
  if (stages == 0) return config;
  const int most = config.num_stages, unit = stages_unit(config);
  if (stages < kMinForcedStages || stages > most || stages % unit != 0)
    throw Error(ErrorKind::InvalidValue, "fgemm: the forced stages (" + std::to_string(stages) + ") do not fit " +
                                             config.name() + ": it takes " + std::to_string(kMinForcedStages) +
                                             " to " + std::to_string(most) + " stages" +
                                             (unit > 1 ? ", a multiple of " + std::to_string(unit) : ""));
  config.num_stages = stages;
  return config;
}

// The candidate of least estimated cost among those `eligible` keeps. Ties: in the decode regime, the one whose
// waves keep a larger share of the SMs busy (by more than kDecodeBusyShareTie); then the larger tile (counting only
// rows the problem has), then no cluster. The models tie where the DRAM bounds every candidate; there, on an H100,
// tiles that left SMs idle in their last wave ran slower on the decode shapes (128 x 24576 x 1536: 21.4 µs in 64 x
// 192 tiles, 256 of them in two waves of 132 CTAs, against 24.7 in 64 x 256, 192 tiles; docs/PERFORMANCE.md).
template <class Eligible>
Cheapest cheapest(const std::vector<KernelConfig>& configs, const ProblemSize& problem, const DeviceLimits& device,
                  Eligible eligible) {
  const auto useful_area = [&](const KernelConfig& c) {
    return std::min<std::int64_t>(c.block_m, problem.m) * c.block_n;
  };
  const auto busy_share = [&](const KernelConfig& c) {
    return double(cluster_tiles(problem, c)) / double(waves_of(problem, c, device) * max_clusters(c, device));
  };
  const bool decode_regime = in_decode_regime(problem);
  const auto better_tie_breaker = [&](const KernelConfig& c, const KernelConfig& best) {
    if (decode_regime) {
      const double share = busy_share(c), best_share = busy_share(best);
      if (std::abs(share - best_share) > kDecodeBusyShareTie) return share > best_share;
    }
    return useful_area(c) > useful_area(best);
  };
  Cheapest best;
  for (const auto& config : configs) {
    if (!eligible(config)) continue;
    const double cost = estimated_cost(problem, config, device);
    const bool better_tie = best.config && better_tie_breaker(config, *best.config);
    if (!best.config || cost < best.cost * (1 - 1e-9) || (cost <= best.cost * (1 + 1e-9) && better_tie))
      best = {&config, cost};
  }
  return best;
}

}  // namespace

KernelConfig choose_config(const ProblemSize& problem, const DeviceLimits& device, BlockShape forced) {
  const bool split_k_chosen = chooses_split_k(problem, forced);
  const auto configs =
      candidate_configs(problem, device, forced.cluster_m != 0, forced.split_k > 1 || split_k_chosen, forced.c_slots);
  // The cheapest candidate of the forced shape and split (none forced: unsplit), then perhaps a chosen split.
  const Cheapest choice = cheapest(configs, problem, device, [&](const KernelConfig& config) {
    if (forced.block_m != 0 && (config.block_m != forced.block_m || config.block_n != forced.block_n)) return false;
    if (forced.cluster_m != 0 && (config.cluster_m != forced.cluster_m || config.cluster_n != forced.cluster_n))
      return false;
    if (forced.c_slots != 0 && config.c_slots != forced.c_slots) return false;
    if (forced.block_m == 0 && config.block_scaled() && fp8_only_when_forced(problem, config)) return false;
    return config.split_k == std::max(forced.split_k, 1);
  });
  const KernelConfig* best = choice.config;
  if (best && split_k_chosen &&
      (cluster_tiles(problem, *best) < kSplitWhenSmsBusyBelow * max_clusters(*best, device) ||
       (dram_outpaces_the_fit(device) && in_sixteen_bit_decode(problem) && best->block_n <= kChainBoundMaxBlockN))) {
    const Cheapest split = cheapest(configs, problem, device, [&](const KernelConfig& config) {
      const double share = config.split_k == kWideSplit ? kWideSplitCtasOfSms : kSplitCtasOfSms;
      return config.split_k > 1 && cluster_tiles(problem, config) * config.split_k <= share * device.num_sms;
    });
    if (split.config && split.cost < choice.cost) best = split.config;
  }
  if (!best)
    throw Error(ErrorKind::InvalidValue,
                forced.block_m || forced.split_k || forced.c_slots
                    ? "fgemm: the forced tile " + std::to_string(forced.block_m) + "x" +
                          std::to_string(forced.block_n) + " (cluster " + std::to_string(forced.cluster_m) + "x" +
                          std::to_string(forced.cluster_n) + ", split-K " + std::to_string(forced.split_k) +
                          ", ring of C " + std::to_string(forced.c_slots) + ") is not a supported configuration"
                    : std::string("fgemm: no kernel configuration fits the device's shared memory"));
  KernelConfig chosen = with_forced_stages(
      with_staging_halves(problem, with_alternate_k_blocks(problem, *best, device), device), forced.num_stages);
  // The grid: whole clusters, no more than there are cluster tiles, or every SM for the masked layout,
  // whose tile count is known only on the device (masked_m).
  const std::int64_t most = max_clusters(chosen, device);
  const std::int64_t clusters = problem.shape.layout == detail::GemmLayout::Masked
                                    ? most
                                    : std::min(cluster_tiles(problem, chosen), most);
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
