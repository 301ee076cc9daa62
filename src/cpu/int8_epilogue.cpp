#include "cpu/int8_epilogue.hpp"

#include <cstring>

#include "cpu/bf16.hpp"
#include "cpu/f16.hpp"
#include "cpu/write_d.hpp"

namespace fgemm::cpu {

using detail::GemmProblem;
using detail::Scaling;

const float* bias_in_fp32(const GemmProblem& p, ScratchBuffer& storage) {
  if (p.bias == nullptr || p.bias_dtype == DType::F32) return static_cast<const float*>(p.bias);
  const auto* bits = static_cast<const std::uint16_t*>(p.bias);
  auto* values = storage.get<float>(static_cast<std::size_t>(p.n));
  for (std::int64_t j = 0; j < p.n; ++j)
    values[j] = p.bias_dtype == DType::BF16 ? float_from_bf16(bits[j]) : float_from_f16(bits[j]);
  return values;
}

void write_int8_d(const GemmProblem& p, const Int8KernelSet& kernels, const RowBlock& block, const float* bias,
                  std::int64_t first_row, std::int64_t rows, std::int64_t n0, std::int64_t cols, const void* sums,
                  std::int64_t sums_stride) {
  if (p.scaling == Scaling::None) {
    for (std::int64_t r = 0; r < rows; ++r)
      std::memcpy(static_cast<std::int32_t*>(block.d) + (first_row + r) * p.d_row_stride + n0,
                  static_cast<const std::int32_t*>(sums) + r * sums_stride, cols * sizeof(std::int32_t));
    return;
  }
  if (p.scaling == Scaling::Block && bias == nullptr) {
    write_d(p, *kernels.output, block, first_row, rows, n0, cols, static_cast<const float*>(sums), sums_stride);
    return;
  }
  // A row's FP32 values, and RowColumn's column scales.
  thread_local ScratchBuffer storage;
  float* values = storage.get<float>(2 * cols);
  float* column_scales = values + cols;
  if (p.scaling == Scaling::RowColumn)
    for (std::int64_t j = 0; j < cols; ++j) column_scales[j] = block.sfb[(n0 + j) * p.sfb_n_stride];
  const float* bias_row = bias ? bias + n0 : nullptr;
  for (std::int64_t r = 0; r < rows; ++r) {
    if (p.scaling == Scaling::RowColumn) {
      kernels.scale_row(static_cast<const std::int32_t*>(sums) + r * sums_stride,
                        block.sfa[(first_row + r) * p.sfa_m_stride], column_scales, bias_row, cols, values);
    } else {
      const float* sum = static_cast<const float*>(sums) + r * sums_stride;
      for (std::int64_t j = 0; j < cols; ++j) values[j] = sum[j] + bias_row[j];
    }
    write_d(p, *kernels.output, block, first_row + r, 1, n0, cols, values, cols);
  }
}

}  // namespace fgemm::cpu
