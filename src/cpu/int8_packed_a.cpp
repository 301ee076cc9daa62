#include "cpu/int8_packed_a.hpp"

#include <cstring>

#include "cpu/pack_tasks.hpp"

namespace fgemm::cpu {

Int8PackedA::Int8PackedA(const detail::GemmProblem& p, const std::vector<RowBlock>& blocks,
                         const Int8KernelSet& kernels, ScratchBuffer& storage)
    : blocks_(blocks), row_granule_(kernels.row_granule), element_bytes_(kernels.packed_element_bytes) {
  std::int64_t bytes = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    offsets_.push_back(bytes);
    bytes += p.k_blocks() * block_stride(i);
  }
  base_ = static_cast<unsigned char*>(storage.get(static_cast<std::size_t>(bytes)));
  pack_in_tasks(p, blocks, [&](const PackTask& task) {
    const RowBlock& block = blocks[task.block];
    kernels.pack_a(reinterpret_cast<const std::int8_t*>(block.a) + task.first_row * p.a_row_stride + task.k0,
                   p.a_row_stride, task.rows, task.k_len, padded_rows(task.block),
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
