#include "cpu/write_d.hpp"

namespace fgemm::cpu {

void write_d(const detail::GemmProblem& p, const KernelSet& kernels, const RowBlock& block, std::int64_t first_row,
             std::int64_t rows, std::int64_t n0, std::int64_t cols, const float* sums, std::int64_t sums_stride) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t row = first_row + r;
    const float* sum = sums + r * sums_stride;
    const float* c = block.c ? block.c + row * p.c_row_stride + n0 : nullptr;
    if (p.d_dtype == DType::BF16) {
      kernels.write_bf16_row(sum, c, cols, static_cast<std::uint16_t*>(block.d) + row * p.d_row_stride + n0);
      continue;
    }
    if (p.d_dtype == DType::F16) {
      kernels.write_f16_row(sum, c, cols, static_cast<std::uint16_t*>(block.d) + row * p.d_row_stride + n0);
      continue;
    }
    float* out = static_cast<float*>(block.d) + row * p.d_row_stride + n0;
    if (c)
      for (std::int64_t j = 0; j < cols; ++j) out[j] = sum[j] + c[j];
    else
      for (std::int64_t j = 0; j < cols; ++j) out[j] = sum[j];
  }
}

}  // namespace fgemm::cpu
