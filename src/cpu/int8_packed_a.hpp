// The INT8 GEMM's A, packed once per call: every work unit that needs rows of A reads them here.
#pragma once

#include <cstdint>
#include <vector>

#include "core/problem.hpp"
#include "cpu/int8_kernel_set.hpp"
#include "cpu/row_blocks.hpp"
#include "cpu/scratch_buffer.hpp"

namespace fgemm::cpu {

class Int8PackedA {
 public:
  // Packs the rows of every block, in parallel on the process's thread pool, into `storage`: block i is
  // PackInt8A's layout with every K block and packed_rows = padded_rows(i), its row count rounded up to the
  // set's row granule (the rows past it zero), so that its rows [r0, r0 + rows) of K block kb start at byte
  // kb * block_stride(i) of rows(i, r0).
  Int8PackedA(const detail::GemmProblem& problem, const std::vector<RowBlock>& blocks, const Int8KernelSet& kernels,
              ScratchBuffer& storage);

  std::int64_t padded_rows(std::size_t block) const;
  // Row `row` of block `block`, K block 0.
  const unsigned char* rows(std::size_t block, std::int64_t row) const { return at(block, row); }
  // Bytes from one K block of a block's packed A to the next.
  std::int64_t block_stride(std::size_t block) const { return padded_rows(block) * kBlockK * element_bytes_; }

 private:
  unsigned char* at(std::size_t block, std::int64_t row) const {
    return base_ + offsets_[block] + row * kBlockK * element_bytes_;
  }

  const std::vector<RowBlock>& blocks_;
  std::int64_t row_granule_;
  std::int64_t element_bytes_;
  std::vector<std::int64_t> offsets_;  // in bytes, per block
  unsigned char* base_;
};

}  // namespace fgemm::cpu
