#include "cuda/heuristics.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "cuda/cost_model.hpp"
#include "cuda/mma_instruction.hpp"
#include "fgemm/common.cuh"
#include "fgemm/error.hpp"

namespace fgemm::cuda {

namespace {

// The CTAs of a cluster run in one GPC, of 16 to 18 SMs on an H100: clusters of more than two CTAs are counted
// as if every GPC had 16 SMs (the launcher asks the driver for the exact number).
constexpr int kGpcSms = 16;
// Split-K shares a tile's K between 2, 4 or 8 CTAs (a GPC holds whole clusters of each).
constexpr int kSplits[] = {2, 4, 8};
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

// INT8 runs the tilings of FP8 (its block recipe) and of the 16-bit kinds (no promotion), within its own limits.
// Its wgmma takes N of 8, 16 or 24, then multiples of 16 only. Its block recipe's promotion converts each INT32
// partial to FP32 (partial_value in math_block_scaled.cuh), which takes registers FP8's promotion does not, and
// ptxas spills some of FP8's tilings. A few bytes spilled (at most 24 stored, 28 loaded: a register or two
// reloaded from L1 once per round of stages) cost less than a narrower tile or a shallower ring: on an H100 the
// masked layout's 128 x 256 tiles ran 1.08-1.16x faster than its spill-free 128 x 128, the contiguous layout's
// 1.04-1.07x, and 64-column warpgroups with FP8's 13 stages 1.12-1.26x faster than with 4 where the helper warp
// copies sfa (docs/PERFORMANCE.md). Excluded are the tilings that spilled more: K loops unrolled over more than
// four stages for warpgroups of more than 64 columns (the masked layout: more than 16); warpgroups of more than
// 128 columns, but for the column halves of 128 x 256 tiles without bias or C; three math warpgroups of more than
// 96 columns in the masked layout, and of more than 64 beside a ring of C there or where the helper warp copies
// sfa; 112 columns where it does; more than 96 columns with three stages (beside a ring of C); and, with a bias,
// whose address stays live through the K loop, more than 88 (tests/cpp/test_cuda_kernel_compile.cpp holds the
// chosen kernels to these bytes). With a bias or C, the recipe without promotion keeps its columns' scales beside
// the sums and the bias's loads or C's reads: at most 128 columns (256 spilled).
constexpr int kMaxInt8BlockStages = 4;
constexpr int kMaxInt8BlockColumnsNarrow = 64;
constexpr int kMaxInt8BlockColumnsAnyStages = 16;
constexpr int kMaxInt8BlockColumns = 128;
constexpr int kMaxInt8BlockColumnsMasked3 = 96;
constexpr int kInt8BlockColumnsSpilledByHelper = 112;
constexpr int kMaxInt8BlockColumnsWithC3 = 64;
constexpr int kMaxInt8BlockColumnsWithBias = 88;
constexpr int kMaxInt8BlockColumnsThreeStages = 96;
constexpr int kMaxInt8ColumnsWithInputs = 128;

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
constexpr int kAlternationUnit = 4;
constexpr int kMaxAlternatingBlockN = 64;
constexpr int kMaxAlternatingBlockNSixteenBit = 32;
constexpr int kMinAlternatingKBlocksSixteenBit = 32;

// Where the problem has fewer rows than a tile, a stage loads only the 8, 16 or 32 rows that hold them
// (TileConfig::a_rows).
constexpr int kTrimmedRowsA[] = {8, 16, 32};

// Whether INT8 keeps the candidate, its stages limited.
bool int8_candidate(const ProblemSize& problem, const KernelConfig& config) {
  if (!mma_n_is_valid(MmaType::S8S32, config.mma_n())) return false;
  const KernelShape& shape = problem.shape;
  if (!config.block_scaled())
    return !(shape.has_bias || shape.has_c) || config.warpgroup_n() <= kMaxInt8ColumnsWithInputs;
  const int columns = config.warpgroup_n();
  const bool three = config.num_math_warpgroups() == 3;
  const bool masked = shape.layout == detail::GemmLayout::Masked;
  if (!shape.sfa_by_tma && columns == kInt8BlockColumnsSpilledByHelper) return false;
  if (shape.has_c && three && (masked || !shape.sfa_by_tma) && columns > kMaxInt8BlockColumnsWithC3) return false;
  if (config.column_halves() > 1) return !shape.has_bias && !shape.has_c;
  const bool masked_three = masked && three;
  const int most_columns = shape.has_bias ? kMaxInt8BlockColumnsWithBias
                           : masked_three ? kMaxInt8BlockColumnsMasked3
                                          : kMaxInt8BlockColumns;
  return columns <= most_columns &&
         (config.num_stages >= kMaxInt8BlockStages || columns <= kMaxInt8BlockColumnsThreeStages);
}

// The most of `stages` INT8's block recipe unrolls its K loop over, for a warpgroup of `columns` columns.
int int8_block_stages(const KernelShape& shape, int columns, int stages) {
  if (columns <= kMaxInt8BlockColumnsAnyStages) return stages;
  const bool narrow = columns <= kMaxInt8BlockColumnsNarrow && shape.layout != detail::GemmLayout::Masked;
  return narrow ? stages : std::min(stages, kMaxInt8BlockStages);
}

void limit_int8_candidates(const ProblemSize& problem, std::vector<KernelConfig>& configs) {
  for (KernelConfig& config : configs)
    if (config.block_scaled())
      config.num_stages = int8_block_stages(problem.shape, config.warpgroup_n(), config.num_stages);
  configs.erase(std::remove_if(configs.begin(), configs.end(),
                               [&](const KernelConfig& c) { return !int8_candidate(problem, c); }),
                configs.end());
}

// The normal layout with A K-major: candidates whose tiles have more rows than the problem load only the rows
// of A it has, unless a cluster multicasts A.
void trim_rows_of_a(const ProblemSize& problem, std::vector<KernelConfig>& configs) {
  if (problem.shape.layout != detail::GemmLayout::Normal || problem.shape.a_mn_major) return;
  for (KernelConfig& config : configs) {
    if (config.cluster_n > 1) continue;
    for (int rows : kTrimmedRowsA) {
      if (problem.m <= rows && rows < config.block_m) {
        config.a_rows = rows;
        break;
      }
    }
  }
}

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

namespace {

// The rounds of refills a ring of C waits for in the epilogue: those of the chunks it cannot hold, each round as
// many as it has slots, issued one after another as the slots are read.
int c_ring_refill_rounds(const KernelConfig& config) {
  const int streamed = config.c_chunks() - config.c_slots;
  return streamed > 0 ? ceil_div(streamed, config.c_slots) : 0;
}

}  // namespace

double c_ring_cycles(const KernelConfig& config) {
  return config.c_slots == 0 ? 0.0 : c_ring_refill_rounds(config) * kLoadLatencyCycles;
}

namespace {

constexpr int kStagesBesideARing = 4;

// With a C of its own, each candidate with a ring of C (epilogue_c_ring.cuh) of every size that gains it a
// stage or a round of refills in the epilogue over the next smaller ring: all of a warpgroup's chunks (nothing of
// C waited for in the epilogue) down to one, with the most stages that fit beside it. A larger ring of as many
// stages and rounds gains nothing, and its slots, no longer dividing the chunks, cost registers
// (CRing::slot_of). Where any candidate keeps four stages beside its ring, none with fewer is offered: on an
// H100, BF16 tiles with C (128 x 256 and 128 x 240, at M = 4096) ran 2-15% faster with four stages and a ring
// of half their chunks than with three and the whole ring, or than 128 x 240 with three, though the model's one
// load latency per round of refills weighed them the other way (docs/PERFORMANCE.md). A forced ring
// (`forced_slots` not 0): that ring alone, where the tile has as many chunks, with however many stages fit.
std::vector<KernelConfig> with_c_rings(const std::vector<KernelConfig>& configs, const DeviceLimits& device,
                                       int forced_slots) {
  std::vector<KernelConfig> rings;
  for (KernelConfig config : configs) {
    if (forced_slots != 0) {
      if (forced_slots > config.c_chunks()) continue;
      config.c_slots = forced_slots;
      config.num_stages = most_stages(config, device);
      if (config.num_stages >= 2) rings.push_back(config);
      continue;
    }
    std::vector<KernelConfig> sizes;
    for (config.c_slots = 1; config.c_slots <= config.c_chunks(); ++config.c_slots) {
      config.num_stages = most_stages(config, device);
      if (config.num_stages < 2) break;
      const bool gains = sizes.empty() || c_ring_refill_rounds(config) < c_ring_refill_rounds(sizes.back());
      if (!gains) continue;
      // The smaller rings of no more stages are worse in rounds alone.
      while (!sizes.empty() && sizes.back().num_stages <= config.num_stages) sizes.pop_back();
      sizes.push_back(config);
    }
    rings.insert(rings.end(), sizes.begin(), sizes.end());
  }
  const auto few_stages = [](const KernelConfig& c) { return c.num_stages < kStagesBesideARing; };
  if (forced_slots == 0 && !std::all_of(rings.begin(), rings.end(), few_stages))
    rings.erase(std::remove_if(rings.begin(), rings.end(), few_stages), rings.end());
  return rings;
}

// The split-K variants of the single-CTA configurations: each split count that divides the K blocks evenly
// (kernels/fgemm/sm90/gemm_config.cuh), leaving each CTA at least two, with the most stages that fit beside
// the tile's FP32 sums.
void add_split_k_variants(std::vector<KernelConfig>& configs, const ProblemSize& problem, const DeviceLimits& device) {
  const auto layout = problem.shape.layout;
  if (layout != detail::GemmLayout::Normal && layout != detail::GemmLayout::Masked) return;
  const std::size_t singles = configs.size();
  for (std::size_t i = 0; i < singles; ++i) {
    if (configs[i].cluster_size() != 1 || configs[i].column_halves() != 1) continue;
    const std::int64_t k_blocks = tile_k_blocks(problem, configs[i]);
    for (int splits : kSplits) {
      if (k_blocks % splits != 0 || k_blocks / splits < 2) continue;
      KernelConfig config = configs[i];
      config.split_k = splits;
      // The owner of every split_k-th warp takes its peers' sums in slots of the tile's sums' memory.
      if (!config.split_k_slots_fit()) continue;
      config.num_stages = most_stages(config, device);
      if (config.num_stages >= 2) configs.push_back(config);
    }
  }
}

}  // namespace

std::vector<KernelConfig> candidate_configs(const ProblemSize& problem, const DeviceLimits& device,
                                            bool with_clusters, bool with_split_k, int c_slots) {
  const detail::Scaling scaling = problem.shape.scaling;
  std::vector<KernelConfig> configs = scaling == detail::Scaling::Block || scaling == detail::Scaling::RowBlocks
                                          ? fp8_candidates(problem, device, with_clusters)
                                          : no_scale_candidates(problem, device, with_clusters);
  if (problem.shape.has_c) configs = with_c_rings(configs, device, c_slots);
  trim_rows_of_a(problem, configs);
  if (problem.shape.ab_dtype == DType::I8) limit_int8_candidates(problem, configs);
  if (scaling == detail::Scaling::RowBlocks) {
    keep_row_blocks_candidates(problem, configs);
    return configs;
  }
  // Split-K adds FP32 sums: INT8's exact sums, whose bits D int32 takes, never split.
  const bool exact_sums = problem.shape.ab_dtype == DType::I8 && problem.shape.scaling == detail::Scaling::None;
  if (with_split_k && !exact_sums) add_split_k_variants(configs, problem, device);
  return configs;
}

double estimated_cost(const ProblemSize& problem, const KernelConfig& config, const DeviceLimits& device) {
  if (config.shape.scaling == detail::Scaling::RowBlocks) return row_blocks_cost(problem, config, device);
  return config.block_scaled() ? fp8_cost(problem, config, device) : no_scale_cost(problem, config, device);
}

namespace {

// Whether the heuristics weigh split-K on their own (where no tile or split is forced): the 16-bit kinds in
// the normal layout, where the best single-CTA tiling leaves a third of the SMs or more idle. On an H100 such
// shapes ran up to 1.5x faster split in two or four (M = 1 or 128, N = 256 or 576, K = 7168), while shapes
// whose tiles filled the GPU ran slower split, whatever the tile (docs/PERFORMANCE.md); FP8's decode shapes
// did not gain, and INT8's were not measured. A split tile's fixed cost is large (kSplitKFixedCycles), so
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

// Whether a decode tile of the problem gains from alternate K blocks, by its kind, columns and K blocks.
bool alternation_pays(const ProblemSize& problem, const KernelConfig& config) {
  if (in_decode_regime(problem)) return config.block_n <= kMaxAlternatingBlockN;
  const bool sixteen_bit_decode =
      is_sixteen_bit(problem) && problem.shape.layout == detail::GemmLayout::Normal && problem.m <= kDecodeMaxM;
  return sixteen_bit_decode && config.block_n <= kMaxAlternatingBlockNSixteenBit &&
         tile_k_blocks(problem, config) >= kMinAlternatingKBlocksSixteenBit;
}

// The chosen configuration with alternate K blocks, where its 64-row tile can take them and gains from them.
KernelConfig with_alternate_k_blocks(const ProblemSize& problem, KernelConfig config, const DeviceLimits& device) {
  if (config.block_m != 64 || !alternation_pays(problem, config) || config.cluster_size() != 1 ||
      config.c_slots != 0 || tile_k_blocks(problem, config) % kAlternationUnit != 0)
    return config;
  KernelConfig alternating = config;
  alternating.alternate_k_blocks = true;
  alternating.num_stages = most_stages(alternating, device) / kAlternationUnit * kAlternationUnit;
  return alternating.num_stages >= kAlternationUnit ? alternating : config;
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
       (dram_outpaces_the_fit(device) && problem.m <= kDecodeMaxM && best->block_n <= kChainBoundMaxBlockN))) {
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
  KernelConfig chosen = with_alternate_k_blocks(problem, *best, device);
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
