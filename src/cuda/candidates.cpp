// The candidate configurations of a problem (candidate_configs, heuristics.hpp): each kind's own tilings
// (fp8_cost_model.cpp, no_scale_cost_model.cpp) with the rings of C, the rows of A, INT8's limits and split-K
// that the problem's shape calls for.
#include "cuda/heuristics.hpp"

#include <algorithm>
#include <vector>

#include "cuda/cost_model.hpp"
#include "cuda/mma_instruction.hpp"
#include "fgemm/common.cuh"

namespace fgemm::cuda {

namespace {

// Split-K shares a tile's K between 2, 4 or 8 CTAs (a GPC holds whole clusters of each).
constexpr int kSplits[] = {2, 4, 8};

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

}  // namespace fgemm::cuda
