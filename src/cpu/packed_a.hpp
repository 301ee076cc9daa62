// A decoded once per call: every work unit that needs rows of A reads them here instead of decoding them
// again for each tile of N.
#pragma once

#include <vector>

#include "core/problem.hpp"
#include "cpu/kernel_set.hpp"
#include "cpu/operand_packing.hpp"
#include "cpu/row_blocks.hpp"
#include "cpu/scratch_buffer.hpp"

namespace fgemm::cpu {

class PackedA {
 public:
  // Packs the rows of every block (through `operands`), in parallel on the process's thread pool, into
  // `storage`: block i is
  // PackA's layout with packed_rows = its row count and every K block, so that its rows [r0, r0 + rows) of
  // K block kb start at element kb * block_stride(i) + r0 * kBlockK of rows(i, 0).
  PackedA(const detail::GemmProblem& problem, const std::vector<RowBlock>& blocks, const KernelSet& kernels,
          const OperandPacking& operands, ScratchBuffer& storage);

  // Row `row` of block `block`, K block 0.
  const unsigned char* rows(std::size_t block, std::int64_t row) const { return at(block, row, 0); }
  // Elements from one K block of a block's packed A to the next.
  std::int64_t block_stride(std::size_t block) const { return blocks_[block].rows * kBlockK; }

 private:
  unsigned char* at(std::size_t block, std::int64_t row, std::int64_t k_block) const {
    return base_ + (offsets_[block] + k_block * block_stride(block) + row * kBlockK) * element_bytes_;
  }

  const std::vector<RowBlock>& blocks_;
  std::int64_t element_bytes_;
  std::vector<std::int64_t> offsets_;  // in elements, per block
  unsigned char* base_;
};

}  // namespace fgemm::cpu
