#include "cpu/int8_blocked_gemm.hpp"

#include <algorithm>

#include "cpu/int8_epilogue.hpp"
#include "cpu/scratch_buffer.hpp"
#include "cpu/split_evenly.hpp"
#include "cpu/thread_pool.hpp"
#include "cpu/work_units.hpp"
#include "fgemm/common.cuh"

namespace fgemm::cpu {
namespace {

using detail::GemmProblem;
using detail::Scaling;

// Columns of one unit: a multiple of kBlockN, so that its blocks of columns are sfb's (Scaling::Block). A unit
// reads its rows of packed A once, so wider strips read A fewer times (measured at M = 4096: 256 columns are
// 5-20% faster than 128, and as fast as 512, which leave fewer units to balance the threads).
constexpr std::int64_t kStripCols = 2 * kBlockN;
// K values packed at once: a panel's span of B (16 KiB for the 32-column panels) stays in L1 while the rows'
// packed A streams past it (measured: spans of 1024, whose panels and a row panel's A do not fit L1 together,
// are up to 7% slower).
constexpr std::int64_t kSpanK = 4 * kBlockK;
// Rows that a unit multiplies by one packed span before the next: their packed A (128 KiB) stays in L2.
constexpr std::int64_t kChunkRows = 256;
// Rows below which a unit is not split further to give every thread work: each part packs B again.
constexpr std::int64_t kMinUnitRows = 64;
// Rows above which a block is split: a unit's sums (512 KiB) stay in L2 from one span to the next.
constexpr std::int64_t kMaxUnitRows = 512;

// A chunk's rows (a multiple of the row granule) cut into panels of whole row groups, at most max_rows each,
// of nearly equal sizes; calls emit(first_row, rows) for each.
template <class Emit>
void for_each_row_panel(const Int8KernelSet& kernels, std::int64_t rows, Emit emit) {
  const std::int64_t granule = kernels.row_granule, groups = rows / granule;
  split_evenly(groups, ceil_div(groups, kernels.max_rows / granule),
               [&](std::int64_t first_group, std::int64_t panel_groups) {
                 emit(first_group * granule, panel_groups * granule);
               });
}

// What every unit of one call shares.
struct Call {
  const GemmProblem& problem;
  const std::vector<RowBlock>& blocks;
  const Int8PackedA& packed_a;
  const Int8KernelSet& kernels;
  const float* bias;
};

// One chunk of a unit's rows and one packed span of its strip of B.
struct Chunk {
  const unsigned char* packed_a;  // the chunk's first row, the span's first K block
  std::int64_t a_block_stride;    // bytes
  std::int64_t first_row;         // in the unit
  std::int64_t rows;              // a multiple of the row granule: the unit's rows, filled up to a whole group
  std::int64_t valid_rows;        // the unit's rows among them
  const unsigned char* packed_b;
  std::int64_t span_start;
  std::int64_t k_len;
};

// Scaling::None and RowColumn: the chunk's INT32 sums plus the span's, panel by panel.
void add_span_sums(const Call& call, const Chunk& chunk, const WorkUnit& unit, std::int32_t* sums) {
  const Int8KernelSet& kernels = call.kernels;
  const std::int64_t span_blocks = ceil_div(chunk.k_len, kBlockK);
  // Column panels outside: one packed B panel stays in L1 while the rows' A panels stream past it.
  for (std::int64_t panel = 0; panel * kernels.panel_cols < unit.cols; ++panel) {
    const unsigned char* b_panel = chunk.packed_b + panel * span_blocks * kernels.b_block_bytes;
    for_each_row_panel(kernels, chunk.rows, [&](std::int64_t r0, std::int64_t rows) {
      kernels.sum_kernels[rows - 1](
          chunk.packed_a + r0 * kBlockK * kernels.packed_element_bytes, chunk.a_block_stride, b_panel, chunk.k_len,
          sums + (chunk.first_row + r0) * kStripCols + panel * kernels.panel_cols, kStripCols, chunk.span_start == 0);
    });
  }
}

// Scaling::Block: each K block of the span promoted into the chunk's FP32 sums with its scales. row_scales
// has room for kChunkRows rows for each block of kBlockN columns of the strip (each with its own sfb).
void add_span_blocks(const Call& call, const Chunk& chunk, const WorkUnit& unit, float* sums, float* row_scales) {
  const GemmProblem& p = call.problem;
  const Int8KernelSet& kernels = call.kernels;
  const RowBlock& block = call.blocks[unit.block];
  const float* sfa = block.sfa + (unit.first_row + chunk.first_row) * p.sfa_m_stride;
  const float* sfb = block.sfb + unit.n0 / kBlockN * p.sfb_n_stride;
  const std::int64_t span_blocks = ceil_div(chunk.k_len, kBlockK);
  for (std::int64_t i = 0; i < span_blocks; ++i) {
    const std::int64_t kb = chunk.span_start / kBlockK + i;
    const std::int64_t kc = std::min(kBlockK, chunk.k_len - i * kBlockK);
    for (std::int64_t nb = 0; nb * kBlockN < unit.cols; ++nb) {
      const float column_scale = sfb[nb * p.sfb_n_stride + kb * p.sfb_k_stride];
      // The rows that fill up the last row group are multiplied too; their scale keeps their sums finite.
      for (std::int64_t r = 0; r < chunk.rows; ++r)
        row_scales[nb * kChunkRows + r] =
            r < chunk.valid_rows ? sfa[r * p.sfa_m_stride + kb * p.sfa_k_stride] * column_scale : 0.0f;
    }
    const unsigned char* a_block = chunk.packed_a + i * chunk.a_block_stride;
    for (std::int64_t panel = 0; panel * kernels.panel_cols < unit.cols; ++panel) {
      const unsigned char* b_block = chunk.packed_b + (panel * span_blocks + i) * kernels.b_block_bytes;
      const float* panel_scales = row_scales + panel * kernels.panel_cols / kBlockN * kChunkRows;
      for_each_row_panel(kernels, chunk.rows, [&](std::int64_t r0, std::int64_t rows) {
        kernels.block_kernels[rows - 1](
            a_block + r0 * kBlockK * kernels.packed_element_bytes, b_block, kc, panel_scales + r0,
            sums + (chunk.first_row + r0) * kStripCols + panel * kernels.panel_cols, kStripCols, kb == 0);
      });
    }
  }
}

// Working memory of one thread, kept between calls.
struct Scratch {
  ScratchBuffer packed_b, sums, row_scales;
};

// A unit span by span: the strip's span of B is packed once, then multiplied by the unit's rows chunk by
// chunk; last, D.
void multiply_unit(const Call& call, const WorkUnit& unit, Scratch& scratch) {
  const GemmProblem& p = call.problem;
  const Int8KernelSet& kernels = call.kernels;
  const RowBlock& block = call.blocks[unit.block];
  const std::int64_t padded_rows = ceil_div(unit.rows, kernels.row_granule) * kernels.row_granule;
  const std::int64_t panels = ceil_div(unit.cols, kernels.panel_cols);
  const std::int64_t span_blocks = ceil_div(std::min(kSpanK, p.k), kBlockK);
  auto* packed_b = static_cast<unsigned char*>(scratch.packed_b.get(panels * span_blocks * kernels.b_block_bytes));
  void* sums = scratch.sums.get(padded_rows * kStripCols * sizeof(std::int32_t));  // INT32 or FP32, 4 bytes each
  float* row_scales = scratch.row_scales.get<float>(ceil_div(kStripCols, kBlockN) * kChunkRows);

  for (std::int64_t span_start = 0; span_start < p.k; span_start += kSpanK) {
    const std::int64_t k_len = std::min(kSpanK, p.k - span_start);
    kernels.pack_b(reinterpret_cast<const std::int8_t*>(block.b) + unit.n0 * p.b_row_stride + span_start,
                   p.b_row_stride, unit.cols, k_len, packed_b);
    for (std::int64_t r0 = 0; r0 < padded_rows; r0 += kChunkRows) {
      const Chunk chunk{call.packed_a.rows(unit.block, unit.first_row + r0) +
                            span_start / kBlockK * call.packed_a.block_stride(unit.block),
                        call.packed_a.block_stride(unit.block),
                        r0,
                        std::min(kChunkRows, padded_rows - r0),
                        std::min(kChunkRows, unit.rows - r0),
                        packed_b,
                        span_start,
                        k_len};
      if (p.scaling == Scaling::Block)
        add_span_blocks(call, chunk, unit, static_cast<float*>(sums), row_scales);
      else
        add_span_sums(call, chunk, unit, static_cast<std::int32_t*>(sums));
    }
  }
  write_int8_d(p, kernels, block, call.bias, unit.first_row, unit.rows, unit.n0, unit.cols, sums, kStripCols);
}

}  // namespace

void int8_blocked_gemm(const GemmProblem& problem, const std::vector<RowBlock>& blocks, const Int8PackedA& packed_a,
                       const Int8KernelSet& kernels, const float* bias) {
  ThreadPool& pool = ThreadPool::instance();
  const UnitShape shape{kStripCols, kMinUnitRows, kMaxUnitRows, kernels.row_granule};
  const std::vector<WorkUnit> units = make_work_units(problem.n, blocks, shape, pool.num_threads());
  const Call call{problem, blocks, packed_a, kernels, bias};
  pool.run(static_cast<std::int64_t>(units.size()), [&](std::int64_t i) {
    thread_local Scratch scratch;
    if (kernels.begin_micro_kernels) kernels.begin_micro_kernels();
    multiply_unit(call, units[i], scratch);
    if (kernels.end_micro_kernels) kernels.end_micro_kernels();
  });
}

}  // namespace fgemm::cpu
