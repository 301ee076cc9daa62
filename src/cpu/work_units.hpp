// How the blocked CPU GEMMs (FP8 and 16-bit, INT8) share a call among the threads: units of one block's rows
// times one strip of columns, which the threads take in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu/row_blocks.hpp"

namespace fgemm::cpu {

// Rows [first_row, first_row + rows) of one block times columns [n0, n0 + cols).
struct WorkUnit {
  std::size_t block;
  std::int64_t first_row;
  std::int64_t rows;
  std::int64_t n0;
  std::int64_t cols;
};

// What a GEMM's units look like: strips of strip_cols columns; a block's rows cut in parts of at most max_rows, and
// for balance into no more parts than min_rows rows make (each part packs its strips of B again); each part
// whole groups of row_granule rows (what the micro-kernels take) but the last, so that every part starts on one.
struct UnitShape {
  std::int64_t strip_cols;
  std::int64_t min_rows;
  std::int64_t max_rows;
  std::int64_t row_granule;
};

// Every strip of every block, with the blocks' rows cut in parts of at most shape.max_rows, and in more parts
// where there are fewer strips than four per thread (for balance). Units are in the order block, part, strip, so
// that the threads, which take them in order, work on the same part of A at a time.
std::vector<WorkUnit> make_work_units(std::int64_t n, const std::vector<RowBlock>& blocks, const UnitShape& shape,
                                      int threads);

}  // namespace fgemm::cpu
