#include "cpu/packed_a.hpp"

#include "cpu/pack_tasks.hpp"

namespace fgemm::cpu {

PackedA::PackedA(const detail::GemmProblem& p, const std::vector<RowBlock>& blocks, const KernelSet& kernels,
                 const OperandPacking& operands, ScratchBuffer& storage)
    : blocks_(blocks), element_bytes_(kernels.packed_element_bytes) {
  std::int64_t elements = 0;
  for (const RowBlock& block : blocks) {
    offsets_.push_back(elements);
    elements += block.rows * p.k_blocks() * kBlockK;
  }
  base_ = static_cast<unsigned char*>(storage.get(static_cast<std::size_t>(elements * element_bytes_)));
  pack_in_tasks(p, blocks, [&](const PackTask& task) {
    const RowBlock& block = blocks[task.block];
    operands.pack_a(block, task.first_row, task.rows, task.k0, task.k_len, block.rows,
                    at(task.block, task.first_row, task.k0 / kBlockK));
  });
}

}  // namespace fgemm::cpu
