#include "cpu/blocked_gemm.hpp"

#include <algorithm>

#include "cpu/scratch_buffer.hpp"
#include "cpu/split_evenly.hpp"
#include "cpu/thread_pool.hpp"
#include "cpu/work_units.hpp"
#include "cpu/write_d.hpp"
#include "fgemm/common.cuh"

namespace fgemm::cpu {
namespace {

using detail::GemmProblem;

// Columns of one unit: two panels of the widest micro-kernels; divides kBlockN, so a unit has one column
// scale per K block. Narrower than a tile of N so that there are enough units to balance the threads.
constexpr std::int64_t kStripCols = 64;
// K values packed at once (see PackB in kernel_set.hpp): every row of B is read as a run of 1 KiB.
constexpr std::int64_t kSpanK = 8 * kBlockK;
// Rows that a unit multiplies by one packed K block before the next: their packed A (64 KiB in BF16) and
// the strip's sums stay in L2.
constexpr std::int64_t kChunkRows = 256;
// Rows below which a unit is not split further to give every thread work: each part packs B again.
constexpr std::int64_t kMinUnitRows = 64;
// Rows above which a block is split: the strips of one part run over the same packed A (7 MiB in BF16 at
// K = 7168), which stays in L3 only if it is not much larger. Measured at M = 1024, K = 7168: packing B
// once for 1024 rows, with A read from memory for every strip, is slower than packing it twice.
constexpr std::int64_t kMaxUnitRows = 512;
// The micro-kernels take any number of rows.
constexpr UnitShape kUnitShape{kStripCols, kMinUnitRows, kMaxUnitRows, 1};

// Working memory of one thread, kept between calls.
struct Scratch {
  ScratchBuffer packed_b, sums, row_scales;
};

// What multiply_span works on: rows [first_row, first_row + rows) of a unit's block and its columns.
struct Chunk {
  const RowBlock* block;
  const unsigned char* packed_a;  // the chunk's first row, K block 0
  std::int64_t a_block_stride;    // in elements
  std::int64_t first_row;
  std::int64_t rows;
  std::int64_t n0;
  std::int64_t cols;
  float* sums;  // rows x kStripCols, FP32
};

// Multiplies the chunk's rows of packed A by the packed span of B, one K block at a time, into the chunk's
// sums. span_start is the span's first value of K.
void multiply_span(const GemmProblem& p, const KernelSet& kernels, const Chunk& chunk, std::int64_t span_start,
                   std::int64_t k_len, const unsigned char* packed_b, float* row_scales) {
  const std::int64_t col_panels = ceil_div(chunk.cols, kernels.panel_cols);
  const std::int64_t row_panels = ceil_div(chunk.rows, kernels.max_rows);
  const std::int64_t element = kernels.packed_element_bytes;
  const float* sfa = chunk.block->sfa + chunk.first_row * p.sfa_m_stride;
  const float* sfb = chunk.block->sfb + chunk.n0 / kBlockN * p.sfb_n_stride;
  // 16-bit problems run with unit scales (cpu_gemm.cpp).
  const MicroKernel* micro_kernels = p.ab_dtype != DType::E4M3 && kernels.unit_scale_micro_kernels
                                         ? kernels.unit_scale_micro_kernels
                                         : kernels.micro_kernels;
  for (std::int64_t block_start = 0; block_start < k_len; block_start += kBlockK) {
    const std::int64_t kb = (span_start + block_start) / kBlockK;
    const std::int64_t kc = std::min(kBlockK, k_len - block_start);
    const float col_scale = sfb[kb * p.sfb_k_stride];
    for (std::int64_t r = 0; r < chunk.rows; ++r)
      row_scales[r] = sfa[r * p.sfa_m_stride + kb * p.sfa_k_stride] * col_scale;

    const unsigned char* a_block = chunk.packed_a + kb * chunk.a_block_stride * element;
    const unsigned char* b_block = packed_b + block_start * col_panels * kernels.panel_cols * element;
    // Column panels outside: one packed B panel stays in L1 while the rows' A panels stream past it.
    for (std::int64_t panel = 0; panel < col_panels; ++panel) {
      const unsigned char* b_panel = b_block + panel * kc * kernels.panel_cols * element;
      split_evenly(chunk.rows, row_panels, [&](std::int64_t r0, std::int64_t panel_rows) {
        micro_kernels[panel_rows - 1](a_block + r0 * kBlockK * element, b_panel, kc, row_scales + r0,
                                              chunk.sums + r0 * kStripCols + panel * kernels.panel_cols, kStripCols,
                                              kb == 0);
      });
    }
  }
}

// A unit span by span: the strip's span of B is packed once, then multiplied by the unit's rows chunk by
// chunk.
void multiply_unit(const GemmProblem& p, const PackedA& packed_a, const KernelSet& kernels,
                   const OperandPacking& operands, const WorkUnit& unit, const RowBlock& block, Scratch& scratch) {
  const std::int64_t element = kernels.packed_element_bytes;
  const std::int64_t span = std::min(kSpanK, p.k_blocks() * kBlockK);  // packed blocks are kBlockK long
  auto* packed_b = static_cast<unsigned char*>(scratch.packed_b.get(kStripCols * span * element));
  float* sums = scratch.sums.get<float>(unit.rows * kStripCols);
  float* row_scales = scratch.row_scales.get<float>(std::min(unit.rows, kChunkRows));

  for (std::int64_t span_start = 0; span_start < p.k; span_start += kSpanK) {
    const std::int64_t k_len = std::min(kSpanK, p.k - span_start);
    operands.pack_b(block, unit.n0, unit.cols, span_start, k_len, packed_b);
    for (std::int64_t r0 = 0; r0 < unit.rows; r0 += kChunkRows) {
      const Chunk chunk{&block,
                        packed_a.rows(unit.block, unit.first_row + r0),
                        packed_a.block_stride(unit.block),
                        unit.first_row + r0,
                        std::min(kChunkRows, unit.rows - r0),
                        unit.n0,
                        unit.cols,
                        sums + r0 * kStripCols};
      multiply_span(p, kernels, chunk, span_start, k_len, packed_b, row_scales);
    }
  }
  write_d(p, kernels, block, unit.first_row, unit.rows, unit.n0, unit.cols, sums, kStripCols);
}

}  // namespace

void blocked_gemm(const GemmProblem& problem, const std::vector<RowBlock>& blocks, const PackedA& packed_a,
                  const KernelSet& kernels, const OperandPacking& operands) {
  ThreadPool& pool = ThreadPool::instance();
  const std::vector<WorkUnit> units = make_work_units(problem.n, blocks, kUnitShape, pool.num_threads());
  pool.run(static_cast<std::int64_t>(units.size()), [&](std::int64_t i) {
    thread_local Scratch scratch;
    if (kernels.begin_micro_kernels) kernels.begin_micro_kernels();
    multiply_unit(problem, packed_a, kernels, operands, units[i], blocks[units[i].block], scratch);
    if (kernels.end_micro_kernels) kernels.end_micro_kernels();
  });
}

}  // namespace fgemm::cpu
