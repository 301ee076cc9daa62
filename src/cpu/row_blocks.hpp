// The M layouts of ARCHITECTURE.md (Semantics) reduced to one shape of work: blocks of consecutive rows of A and D
// that share one weight matrix (B and sfb of one expert).
#pragma once

#include <cstdint>
#include <vector>

#include "core/problem.hpp"

namespace fgemm::cpu {

struct RowBlock {
  const std::uint8_t* a;  // first row of A (of an MN-major A: its first column), in bytes
  const float* sfa;       // sfa of the first row
  const std::uint8_t* b;  // the block's B, [N, K] or [K, N]
  const float* sfb;       // and its sfb
  void* d;                // first row of D
  const void* c;          // first row of C (FP32 or D's 16-bit type), or null
  std::int64_t rows;
};

// Checks the host-side group arrays (the CPU can read them, unlike the GPU): every m_indices value is an
// expert in [0, G) or -1, the prefix sums never decrease and end at most at M_sum, every masked_m value is in
// [0, M_max]. Throws fgemm::Error naming the operation, the argument, the position and the value.
void check_group_arrays(const detail::GemmProblem& problem);

// The row blocks of a problem, after check_group_arrays: one for the normal layout, one per run of rows of
// the same expert for the contiguous layout with m_indices and one per expert with rows with the prefix
// sums (padding rows belong to none), one per group with rows to compute for the masked layout. (The
// k-grouped layout has none: cpu::gemm runs it expert by expert as normal problems.)
std::vector<RowBlock> make_row_blocks(const detail::GemmProblem& problem);

}  // namespace fgemm::cpu
