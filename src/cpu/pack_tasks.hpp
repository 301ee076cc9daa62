// Packing A once per call, shared among the threads: tasks of a few rows of one block by a run of K.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/problem.hpp"
#include "cpu/kernel_set.hpp"
#include "cpu/row_blocks.hpp"
#include "cpu/thread_pool.hpp"

namespace fgemm::cpu {

// Rows [first_row, first_row + rows) of one block, K values [k0, k0 + k_len).
struct PackTask {
  std::size_t block;
  std::int64_t first_row;
  std::int64_t rows;
  std::int64_t k0;
  std::int64_t k_len;
};

// Calls pack(task) on the process's thread pool for tasks covering every row and K value of every block: 64 rows
// by 1024 values of K each, so that every row is read as runs of 1 KiB (see PackA in kernel_set.hpp).
template <class Pack>
void pack_in_tasks(const detail::GemmProblem& p, const std::vector<RowBlock>& blocks, Pack pack) {
  constexpr std::int64_t kTaskRows = 64;
  constexpr std::int64_t kTaskK = 8 * kBlockK;
  std::vector<PackTask> tasks;
  for (std::size_t i = 0; i < blocks.size(); ++i)
    for (std::int64_t row = 0; row < blocks[i].rows; row += kTaskRows)
      for (std::int64_t k0 = 0; k0 < p.k; k0 += kTaskK)
        tasks.push_back({i, row, std::min(kTaskRows, blocks[i].rows - row), k0, std::min(kTaskK, p.k - k0)});
  ThreadPool::instance().run(static_cast<std::int64_t>(tasks.size()), [&](std::int64_t t) { pack(tasks[t]); });
}

}  // namespace fgemm::cpu
