// How the drivers (packed_a.cpp, blocked_gemm.cpp, direct_gemm.cpp) bring a row block's A and B into the
// kernels' formats, whatever the problem's input type and storage order: E4M3 through the kernel set's
// decoding packers, BF16 and FP16 through its 16-bit packers (Packers16), which read K-major and MN-major
// operands alike.
#pragma once

#include <cstdint>

#include "core/problem.hpp"
#include "cpu/kernel_set.hpp"
#include "cpu/row_blocks.hpp"

namespace fgemm::cpu {

class OperandPacking {
 public:
  // `problem` as validated: a 16-bit problem runs over K rounded up to kPadK (cpu_gemm.cpp), and the values
  // past its own K are packed as zeros. `kernels` has packers for the problem's input type.
  OperandPacking(const detail::GemmProblem& problem, const KernelSet& kernels);

  // Rows [first_row, first_row + rows) x K [k0, k0 + k_len) of a block's A, in PackA's layout.
  void pack_a(const RowBlock& block, std::int64_t first_row, std::int64_t rows, std::int64_t k0, std::int64_t k_len,
              std::int64_t packed_rows, void* packed) const;
  // Columns [n0, n0 + cols) of D x K [k0, k0 + k_len) of a block's B, in PackB's layout.
  void pack_b(const RowBlock& block, std::int64_t n0, std::int64_t cols, std::int64_t k0, std::int64_t k_len,
              void* packed) const;
  // The same part of B in DecodeRows' layout.
  void decode_b_rows(const RowBlock& block, std::int64_t n0, std::int64_t cols, std::int64_t k0, std::int64_t k_len,
                     void* decoded) const;
  // Asks for the same part of B to be brought into the cache (where the operand is K-major: the hardware
  // prefetcher does not foresee runs this short of so many rows).
  void prefetch_b(const RowBlock& block, std::int64_t n0, std::int64_t cols, std::int64_t k0,
                  std::int64_t k_len) const;

 private:
  Matrix16 a_16bit(const RowBlock& block, std::int64_t first_row, std::int64_t k0) const;
  Matrix16 b_16bit(const RowBlock& block, std::int64_t n0, std::int64_t k0) const;
  // The values of [k0, k0 + k_len) that lie within the problem's K.
  std::int64_t k_valid(std::int64_t k0, std::int64_t k_len) const;

  const detail::GemmProblem& problem_;
  const KernelSet& kernels_;
  const Packers16* packers_16bit_;  // null for E4M3
};

}  // namespace fgemm::cpu
