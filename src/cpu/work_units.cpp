#include "cpu/work_units.hpp"

#include <algorithm>

#include "cpu/split_evenly.hpp"
#include "fgemm/common.cuh"

namespace fgemm::cpu {

std::vector<WorkUnit> make_work_units(std::int64_t n, const std::vector<RowBlock>& blocks, const UnitShape& shape,
                                      int threads) {
  const std::int64_t strips = ceil_div(n, shape.strip_cols);
  const std::int64_t wanted_parts =
      ceil_div(4 * static_cast<std::int64_t>(threads), strips * static_cast<std::int64_t>(blocks.size()));
  std::vector<WorkUnit> units;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const std::int64_t rows = blocks[i].rows, groups = ceil_div(rows, shape.row_granule);
    const std::int64_t parts = std::min(
        groups, std::max(ceil_div(rows, shape.max_rows), std::min(wanted_parts, ceil_div(rows, shape.min_rows))));
    split_evenly(groups, parts, [&](std::int64_t first_group, std::int64_t part_groups) {
      const std::int64_t first_row = first_group * shape.row_granule;
      const std::int64_t part_rows = std::min(part_groups * shape.row_granule, rows - first_row);
      for (std::int64_t n0 = 0; n0 < n; n0 += shape.strip_cols)
        units.push_back({i, first_row, part_rows, n0, std::min(shape.strip_cols, n - n0)});
    });
  }
  return units;
}

}  // namespace fgemm::cpu
