// The heuristics' per-kind parts (docs/ARCHITECTURE.md): each kind of GEMM has its candidate configurations
// and its cost model, in a file of its own (fp8_cost_model.cpp, no_scale_cost_model.cpp), on the machine model
// they share (the helpers below, cost_model.cpp); candidates.cpp adds what the problem's shape calls for to the
// kind's tilings, and heuristics.cpp chooses among them by cost.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda/heuristics.hpp"

namespace fgemm::cuda {

constexpr int kMaxStages = 16;

// How long a TMA load takes, seen from the SM, while every SM streams its operands (L2 or DRAM, queues
// included): the stages loading while the math multiplies one must cover it, and a ring of C too small for its
// tile waits it once per refill. On an H100 (docs/PERFORMANCE.md), 4096 x 576 x 7168 BF16 with C in 128 x 144
// tiles took 77 us with three stages and 57 and 55 with four and five (0.69 us per K block with two stages
// loading); 4096 x 7168 x 2048 with C took 8 x 1.7 us longer in 128 x 224 tiles with a ring of one chunk and a
// fourth stage than with a ring of four.
constexpr double kLoadLatencyCycles = 2000;

// Cluster tiles (one tile per CTA of a multicast cluster, one tile per split-K cluster) of the problem, the
// clusters that run at once, and the rounds of cluster tiles the grid takes.
std::int64_t cluster_tiles(const ProblemSize& problem, const KernelConfig& config);
std::int64_t max_clusters(const KernelConfig& config, const DeviceLimits& device);
std::int64_t waves_of(const ProblemSize& problem, const KernelConfig& config, const DeviceLimits& device);
// The K blocks each CTA multiplies per tile: the problem's (k-grouped: an expert's mean), or a split's share.
std::int64_t tile_k_blocks(const ProblemSize& problem, const KernelConfig& config);
// What a tile's split-K reduction adds to its time, in cycles (0 without a split).
double split_k_cycles(const ProblemSize& problem, const KernelConfig& config);
// The rounds of refills a ring of C waits for in the epilogue: those of the chunks it cannot hold, each round as
// many as it has slots, issued one after another as the slots are read.
int c_ring_refill_rounds(const KernelConfig& config);
// What a tile waits in its epilogue for the chunks of C that its ring could not load during the K loop.
double c_ring_cycles(const KernelConfig& config);
// The least time to move `bytes` between DRAM and the SMs, in cycles, at `bytes_per_cycle`.
double dram_cycles(double bytes, double bytes_per_cycle);
// Whether the device's DRAM is faster than that of the H100 the models were fitted on (an H200's): there the
// 16-bit decode tiles that fill the SMs with narrow tiles are bound by each K block's chain (no_scale_cost_model.cpp)
// rather than by their loads, and may split (heuristics.cpp).
bool dram_outpaces_the_fit(const DeviceLimits& device);
// The epilogue's DRAM traffic per element of D, in D's elements: 1 without C; with C, 3 as the models were
// fitted (an FP32 C is two of a 16-bit D's elements), and 2 for a C of D's 16-bit type.
double epilogue_d_passes(const KernelShape& shape);
// The most stages of `config` that fit the device's shared memory (0 if none).
int most_stages(KernelConfig config, const DeviceLimits& device);
// The K blocks of a tile whose warpgroups take alternate ones are a multiple of this, and so are its stages.
constexpr int kAlternationUnit = 4;
// What a kernel's stage count is a multiple of, so that its K loop knows each stage's K block: kAlternationUnit
// where the warpgroups take alternate K blocks (each waits on the stages of its parity); two where the k-grouped K
// loop, whose K blocks are known only on the device, keeps the parity of two partial accumulators; else one.
int stages_unit(const KernelConfig& config);

// The 1x128 / 128x128 block recipe: FP8, and INT8 on the same schedule.
std::vector<KernelConfig> fp8_candidates(const ProblemSize& problem, const DeviceLimits& device, bool with_clusters);
double fp8_cost(const ProblemSize& problem, const KernelConfig& config, const DeviceLimits& device);
// FP8's 1D1D recipe (both operands per 1 x 128 along K): the FP8 candidates it can run, and its model.
void keep_row_blocks_candidates(const ProblemSize& problem, std::vector<KernelConfig>& configs);
double row_blocks_cost(const ProblemSize& problem, const KernelConfig& config, const DeviceLimits& device);
// Candidates the model cannot rank well for this problem, chosen only when forced.
bool fp8_only_when_forced(const ProblemSize& problem, const KernelConfig& config);

// No promotion: BF16 and FP16, and INT8 (exact, or scaled per row and column in the epilogue).
std::vector<KernelConfig> no_scale_candidates(const ProblemSize& problem, const DeviceLimits& device,
                                              bool with_clusters);
double no_scale_cost(const ProblemSize& problem, const KernelConfig& config, const DeviceLimits& device);

}  // namespace fgemm::cuda
