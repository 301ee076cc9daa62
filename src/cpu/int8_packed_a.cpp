#include "cpu/int8_packed_a.hpp"

#include <algorithm>
#include <cstring>

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

Int8PackedA::Int8PackedA(const detail::GemmProblem& p, const std::vector<RowBlock>& blocks,
                         const Int8KernelSet& kernels, ScratchBuffer& storage)
    : blocks_(blocks), row_granule_(kernels.row_granule), element_bytes_(kernels.packed_element_bytes) {
  std::int64_t bytes = 0;
  std::vector<PackTask> tasks;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    offsets_.push_back(bytes);
    bytes += p.k_blocks() * block_stride(i);
    for (std::int64_t row = 0; row < blocks[i].rows; row += kTaskRows)
      for (std::int64_t k0 = 0; k0 < p.k; k0 += kTaskK)
        tasks.push_back({i, row, std::min(kTaskRows, blocks[i].rows - row), k0});
  }
  base_ = static_cast<unsigned char*>(storage.get(static_cast<std::size_t>(bytes)));
  ThreadPool::instance().run(static_cast<std::int64_t>(tasks.size()), [&](std::int64_t t) {
    const PackTask& task = tasks[t];
    const RowBlock& block = blocks[task.block];
    kernels.pack_a(reinterpret_cast<const std::int8_t*>(block.a) + task.first_row * p.a_row_stride + task.k0,
                   p.a_row_stride, task.rows, std::min(kTaskK, p.k - task.k0), padded_rows(task.block),
                   at(task.block, task.first_row) + task.k0 / kBlockK * block_stride(task.block));
  });
  // The rows that fill up the last row group: the kernels multiply them too, into sums nobody reads.
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const std::int64_t padding = padded_rows(i) - blocks[i].rows;
    for (std::int64_t kb = 0; padding > 0 && kb < p.k_blocks(); ++kb)
      std::memset(at(i, blocks[i].rows) + kb * block_stride(i), 0, padding * kBlockK * element_bytes_);
  }
}

std::int64_t Int8PackedA::padded_rows(std::size_t block) const {
  return (blocks_[block].rows + row_granule_ - 1) / row_granule_ * row_granule_;
}

}  // namespace fgemm::cpu
