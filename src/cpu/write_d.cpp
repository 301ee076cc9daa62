#include "cpu/write_d.hpp"

#include "cpu/bf16.hpp"
#include "cpu/f16.hpp"
#include "cpu/scratch_buffer.hpp"

namespace fgemm::cpu {

namespace {

// `cols` elements of a row of C from `row` on, as FP32: the row itself, or a 16-bit C's values widened (exactly)
// into `widened`. They are read before the same row of D is written, so C may be D itself.
const float* c_as_f32(const detail::GemmProblem& p, const void* row, std::int64_t cols, ScratchBuffer& widened) {
  if (p.c_dtype == DType::F32) return static_cast<const float*>(row);
  const auto* bits = static_cast<const std::uint16_t*>(row);
  float* values = widened.get<float>(static_cast<std::size_t>(cols));
  for (std::int64_t j = 0; j < cols; ++j)
    values[j] = p.c_dtype == DType::BF16 ? float_from_bf16(bits[j]) : float_from_f16(bits[j]);
  return values;
}

}  // namespace

void write_d(const detail::GemmProblem& p, const KernelSet& kernels, const RowBlock& block, std::int64_t first_row,
             std::int64_t rows, std::int64_t n0, std::int64_t cols, const float* sums, std::int64_t sums_stride) {
  thread_local ScratchBuffer widened;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t row = first_row + r;
    const float* sum = sums + r * sums_stride;
    const std::int64_t c_offset = (row * p.c_row_stride + n0) * static_cast<std::int64_t>(dtype_size(p.c_dtype));
    const float* c = block.c ? c_as_f32(p, static_cast<const char*>(block.c) + c_offset, cols, widened) : nullptr;
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
