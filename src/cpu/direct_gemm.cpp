#include "cpu/direct_gemm.hpp"

#include <algorithm>
#include <cstring>

#include "cpu/scratch_buffer.hpp"
#include "cpu/thread_pool.hpp"
#include "cpu/write_d.hpp"

namespace fgemm::cpu {
namespace {

using detail::GemmProblem;

// Columns of D (rows of B) per work unit: a multiple of every dot kernel's column count, and a divisor of
// kBlockN, so that a unit has one column scale per K block.
constexpr std::int64_t kUnitCols = 16;
// Bytes that the decoded B, the packed A and the lane sums of one span of K may take: they stay in L1
// while the dot kernels read them again and again.
constexpr std::int64_t kSpanBytes = 32 * 1024;

struct WorkUnit {
  std::size_t block;
  std::int64_t n0;
  std::int64_t cols;
};

// Working memory of one thread, kept between calls.
struct Scratch {
  ScratchBuffer scales, lane_sums, sums, decoded_b;
};

// K values per span: as many whole K blocks as fit in kSpanBytes, at least one.
std::int64_t span_values(const GemmProblem& p, const KernelSet& kernels, std::int64_t rows) {
  const std::int64_t lane_sum_bytes = rows * kUnitCols * kernels.dot.lanes * sizeof(float);
  const std::int64_t bytes_per_value = (rows + kUnitCols) * kernels.packed_element_bytes;
  const std::int64_t blocks = (kSpanBytes - lane_sum_bytes) / bytes_per_value / kBlockK;
  return std::clamp<std::int64_t>(blocks, 1, p.k_blocks()) * kBlockK;
}

// The index into kDotRows of the largest row count not above `rows`.
int dot_kernel_for(std::int64_t rows) {
  int index = 0;
  while (index + 1 < static_cast<int>(std::size(kDotRows)) && kDotRows[index + 1] <= rows) ++index;
  return index;
}

void multiply_unit(const GemmProblem& p, const RowBlock& block, const PackedA& packed_a, std::size_t block_index,
                   const KernelSet& kernels, const OperandPacking& operands, const WorkUnit& unit, Scratch& scratch) {
  const std::int64_t rows = block.rows, element = kernels.packed_element_bytes;

  // scales[kb * rows + r]: the scale of row r's K block kb in this unit's tile of N.
  float* scales = scratch.scales.get<float>(p.k_blocks() * rows);
  const float* sfb = block.sfb + unit.n0 / kBlockN * p.sfb_n_stride;
  for (std::int64_t kb = 0; kb < p.k_blocks(); ++kb)
    for (std::int64_t r = 0; r < rows; ++r)
      scales[kb * rows + r] = block.sfa[r * p.sfa_m_stride + kb * p.sfa_k_stride] * sfb[kb * p.sfb_k_stride];

  const std::int64_t span = span_values(p, kernels, rows);
  auto* decoded = static_cast<unsigned char*>(scratch.decoded_b.get(kUnitCols * span * element));
  float* lane_sums = scratch.lane_sums.get<float>(rows * kUnitCols * kernels.dot.lanes);
  float* sums = scratch.sums.get<float>(rows * kUnitCols);  // sums[r * kUnitCols + col]
  const std::int64_t a_block_stride = packed_a.block_stride(block_index);
  for (std::int64_t span_start = 0; span_start < p.k; span_start += span) {
    const std::int64_t k_len = std::min(span, p.k - span_start), kb0 = span_start / kBlockK;
    // The next span of B, which the hardware prefetcher does not foresee for runs this short.
    operands.prefetch_b(block, unit.n0, unit.cols, span_start + k_len, std::min(span, p.k - span_start - k_len));
    operands.decode_b_rows(block, unit.n0, unit.cols, span_start, k_len, decoded);
    const std::int64_t row_elements = (k_len + kPadK - 1) / kPadK * kPadK;
    // Columns past N (in the last unit) that share a tile with columns before it multiply zeros; their
    // sums are not written.
    std::memset(decoded + unit.cols * row_elements * element, 0, (kUnitCols - unit.cols) * row_elements * element);
    const bool first = span_start == 0, last = span_start + k_len == p.k;
    for (std::int64_t r0 = 0; r0 < rows;) {
      const int kernel = dot_kernel_for(rows - r0);
      const std::int64_t tile_rows = kDotRows[kernel], tile_cols = kernels.dot.tile / tile_rows;
      for (std::int64_t c0 = 0; c0 < unit.cols; c0 += tile_cols)
        kernels.dot.kernels[kernel](packed_a.rows(block_index, r0) + kb0 * a_block_stride * element, a_block_stride,
                                    decoded + c0 * row_elements * element, row_elements, k_len,
                                    scales + kb0 * rows + r0, rows,
                                    lane_sums + (r0 * kUnitCols + c0 * tile_rows) * kernels.dot.lanes, first, last,
                                    sums + r0 * kUnitCols + c0, kUnitCols);
      r0 += tile_rows;
    }
  }
  write_d(p, kernels, block, 0, rows, unit.n0, unit.cols, sums, kUnitCols);
}

}  // namespace

void direct_gemm(const GemmProblem& problem, const std::vector<RowBlock>& blocks, const PackedA& packed_a,
                 const KernelSet& kernels, const OperandPacking& operands) {
  std::vector<WorkUnit> units;
  for (std::size_t i = 0; i < blocks.size(); ++i)
    for (std::int64_t n0 = 0; n0 < problem.n; n0 += kUnitCols)
      units.push_back({i, n0, std::min(kUnitCols, problem.n - n0)});
  ThreadPool::instance().run(static_cast<std::int64_t>(units.size()), [&](std::int64_t i) {
    thread_local Scratch scratch;
    const WorkUnit& unit = units[i];
    multiply_unit(problem, blocks[unit.block], packed_a, unit.block, kernels, operands, unit, scratch);
  });
}

}  // namespace fgemm::cpu
