#include "cpu/quantize_int8.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cpu/bf16.hpp"
#include "cpu/f16.hpp"
#include "cpu/scratch_buffer.hpp"
#include "cpu/thread_pool.hpp"

namespace fgemm::cpu {
namespace {

constexpr float kMaxCode = 127.0f;
constexpr float kAmaxFloor = 1e-10f;
constexpr float kInverseMaxCode = 1.0f / 127.0f;  // fl(1/127): the FP32 nearest

struct Scale {
  float scale;    // what is stored: x ~= q * scale
  float inverse;  // what x is multiplied by before rounding
};

Scale scale_of(float block_amax) {
  const float amax = std::isnan(block_amax) ? block_amax : std::max(block_amax, kAmaxFloor);
  return {amax * kInverseMaxCode, (1.0f / amax) * kMaxCode};
}

// The integer nearest `scaled`, ties to even (the default rounding mode), or 0 for a NaN. The quantizer's
// values lie within +-127.5, so the result fits.
std::int8_t int8_from_scaled(float scaled) {
  return std::isnan(scaled) ? 0 : static_cast<std::int8_t>(std::nearbyint(scaled));
}

// `count` elements of row `row` of group `group` from column `col`, in FP32 (exactly).
void read_row(const detail::Int8QuantizeProblem& p, std::int64_t group, std::int64_t row, std::int64_t col,
              std::int64_t count, float* out) {
  const std::int64_t first = p.x.offset(group, row, col);
  if (p.input == DType::F32) {
    std::copy_n(static_cast<const float*>(p.x.data) + first, count, out);
    return;
  }
  const std::uint16_t* in = static_cast<const std::uint16_t*>(p.x.data) + first;
  if (p.input == DType::BF16) {
    for (std::int64_t i = 0; i < count; ++i) out[i] = float_from_bf16(in[i]);
  } else {
    for (std::int64_t i = 0; i < count; ++i) out[i] = float_from_f16(in[i]);
  }
}

// The largest |value|, or NaN when one is NaN (as PyTorch's amax); 0 for none.
float amax_of(const float* values, std::int64_t count) {
  float amax = 0.0f;
  for (std::int64_t i = 0; i < count; ++i) {
    const float magnitude = std::fabs(values[i]);
    if (std::isnan(magnitude)) return magnitude;
    amax = std::max(amax, magnitude);
  }
  return amax;
}

// One scaling block of group `group`: rows [row, row + rows) and columns [col, col + cols), read into `values`
// (rows * cols floats); returns its scale.
float quantize_block(const detail::Int8QuantizeProblem& p, std::int64_t group, std::int64_t row, std::int64_t rows,
                     std::int64_t col, std::int64_t cols, float* values) {
  for (std::int64_t r = 0; r < rows; ++r) read_row(p, group, row + r, col, cols, values + r * cols);
  const Scale s = scale_of(amax_of(values, rows * cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      p.q.data[p.q.offset(group, row + r, col + c)] = int8_from_scaled(values[r * cols + c] * s.inverse);
  return s.scale;
}

}  // namespace

void quantize_int8(const detail::Int8QuantizeProblem& p) {
  const std::int64_t block_rows = p.block_rows(), block_cols = p.block_cols();
  const std::int64_t scale_rows = p.scale_rows(), scale_cols = p.scale_cols();
  ThreadPool::instance().run(p.groups * scale_rows, [&](std::int64_t index) {
    const std::int64_t group = index / scale_rows, row_block = index % scale_rows;
    const std::int64_t row = row_block * block_rows, rows = std::min(block_rows, p.rows - row);
    thread_local ScratchBuffer block_values;
    float* values = block_values.get<float>(static_cast<std::size_t>(rows * block_cols));
    for (std::int64_t col_block = 0; col_block < scale_cols; ++col_block) {
      const std::int64_t col = col_block * block_cols, cols = std::min(block_cols, p.cols - col);
      p.sf.data[p.sf.offset(group, row_block, col_block)] = quantize_block(p, group, row, rows, col, cols, values);
    }
  });
}

}  // namespace fgemm::cpu
