#include "cpu/operand_packing.hpp"

#include <algorithm>

namespace fgemm::cpu {

using detail::GemmProblem;

OperandPacking::OperandPacking(const GemmProblem& problem, const KernelSet& kernels)
    : problem_(problem),
      kernels_(kernels),
      packers_16bit_(problem.ab_dtype == DType::BF16  ? &kernels.bf16_packers
                     : problem.ab_dtype == DType::F16 ? &kernels.f16_packers
                                                      : nullptr) {}

Matrix16 OperandPacking::a_16bit(const RowBlock& block, std::int64_t first_row, std::int64_t k0) const {
  const std::int64_t i_stride = problem_.a_mn_major ? 1 : problem_.a_row_stride;
  const std::int64_t k_stride = problem_.a_mn_major ? problem_.a_row_stride : 1;
  const auto* a = reinterpret_cast<const std::uint16_t*>(block.a);
  return {a + first_row * i_stride + k0 * k_stride, i_stride, k_stride};
}

Matrix16 OperandPacking::b_16bit(const RowBlock& block, std::int64_t n0, std::int64_t k0) const {
  const std::int64_t i_stride = problem_.b_mn_major ? 1 : problem_.b_row_stride;
  const std::int64_t k_stride = problem_.b_mn_major ? problem_.b_row_stride : 1;
  const auto* b = reinterpret_cast<const std::uint16_t*>(block.b);
  return {b + n0 * i_stride + k0 * k_stride, i_stride, k_stride};
}

std::int64_t OperandPacking::k_valid(std::int64_t k0, std::int64_t k_len) const {
  return std::clamp<std::int64_t>(problem_.k - k0, 0, k_len);
}

void OperandPacking::pack_a(const RowBlock& block, std::int64_t first_row, std::int64_t rows, std::int64_t k0,
                            std::int64_t k_len, std::int64_t packed_rows, void* packed) const {
  if (packers_16bit_ == nullptr)
    kernels_.pack_a(block.a + first_row * problem_.a_row_stride + k0, problem_.a_row_stride, rows, k_len, packed_rows,
                    packed);
  else
    packers_16bit_->pack_a(a_16bit(block, first_row, k0), rows, k_len, k_valid(k0, k_len), packed_rows, packed);
}

void OperandPacking::pack_b(const RowBlock& block, std::int64_t n0, std::int64_t cols, std::int64_t k0,
                            std::int64_t k_len, void* packed) const {
  if (packers_16bit_ == nullptr)
    kernels_.pack_b(block.b + n0 * problem_.b_row_stride + k0, problem_.b_row_stride, cols, k_len, packed);
  else
    packers_16bit_->pack_b(b_16bit(block, n0, k0), cols, k_len, k_valid(k0, k_len), packed);
}

void OperandPacking::decode_b_rows(const RowBlock& block, std::int64_t n0, std::int64_t cols, std::int64_t k0,
                                   std::int64_t k_len, void* decoded) const {
  if (packers_16bit_ == nullptr)
    kernels_.dot.decode_rows(block.b + n0 * problem_.b_row_stride + k0, problem_.b_row_stride, cols, k_len, decoded);
  else
    packers_16bit_->decode_rows(b_16bit(block, n0, k0), cols, k_len, k_valid(k0, k_len), decoded);
}

void OperandPacking::prefetch_b(const RowBlock& block, std::int64_t n0, std::int64_t cols, std::int64_t k0,
                                std::int64_t k_len) const {
  if (problem_.b_mn_major) return;
  const std::int64_t element = packers_16bit_ == nullptr ? 1 : 2;
  const std::int64_t row_bytes = problem_.b_row_stride * element, bytes = k_valid(k0, k_len) * element;
  const std::uint8_t* b = block.b + n0 * row_bytes + k0 * element;
  for (std::int64_t r = 0; r < cols; ++r)
    for (std::int64_t offset = 0; offset < bytes; offset += 64) __builtin_prefetch(b + r * row_bytes + offset);
}

}  // namespace fgemm::cpu
