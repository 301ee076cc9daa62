#include "cpu/packed_a.hpp"

#include <algorithm>

#include "cpu/thread_pool.hpp"

namespace fgemm::cpu {
namespace {

// Rows and K values that one task packs: every row is read as runs of 1 KiB (see PackA in kernel_set.hpp).
constexpr std::int64_t kTaskRows = 64;
constexpr std::int64_t kTaskK = 8 * kBlockK;

struct PackTask {
  std::size_t block;
  std::int64_t first_row;
  std::int64_t rows;
  std::int64_t k0;
};

}  // namespace

PackedA::PackedA(const detail::GemmProblem& p, const std::vector<RowBlock>& blocks, const KernelSet& kernels,
                 const OperandPacking& operands, ScratchBuffer& storage)
    : blocks_(blocks), element_bytes_(kernels.packed_element_bytes) {
  std::int64_t elements = 0;
  std::vector<PackTask> tasks;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    offsets_.push_back(elements);
    elements += blocks[i].rows * p.k_blocks() * kBlockK;
    for (std::int64_t row = 0; row < blocks[i].rows; row += kTaskRows)
      for (std::int64_t k0 = 0; k0 < p.k; k0 += kTaskK)
        tasks.push_back({i, row, std::min(kTaskRows, blocks[i].rows - row), k0});
  }
  base_ = static_cast<unsigned char*>(storage.get(static_cast<std::size_t>(elements * element_bytes_)));
  ThreadPool::instance().run(static_cast<std::int64_t>(tasks.size()), [&](std::int64_t t) {
    const PackTask& task = tasks[t];
    const RowBlock& block = blocks[task.block];
    operands.pack_a(block, task.first_row, task.rows, task.k0, std::min(kTaskK, p.k - task.k0), block.rows,
                    at(task.block, task.first_row, task.k0 / kBlockK));
  });
}

}  // namespace fgemm::cpu
