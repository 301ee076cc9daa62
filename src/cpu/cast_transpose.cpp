#include "cpu/cast_transpose.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "cpu/bf16.hpp"
#include "cpu/quantize.hpp"
#include "cpu/thread_pool.hpp"

namespace fgemm::cpu {
namespace {

constexpr std::int64_t kBlock = 128;

float input_at(const detail::CastTransposeProblem& p, std::int64_t row, std::int64_t col) {
  const std::int64_t offset = p.x.offset(0, row, col);
  return p.input == DType::BF16 ? float_from_bf16(static_cast<const std::uint16_t*>(p.x.data)[offset])
                                : static_cast<const float*>(p.x.data)[offset];
}

// The row-wise half: per_token_cast_to_fp8's (or per_block_cast_to_fp8's) problem on the same tensors.
detail::QuantizeProblem row_wise(const detail::CastTransposeProblem& p) {
  detail::QuantizeProblem q;
  q.block = p.block;
  q.device = p.device;
  q.input = p.input;
  q.use_ue8m0 = p.use_ue8m0;
  q.groups = p.groups, q.rows = p.rows, q.cols = p.cols;
  q.x = p.x;
  q.q = p.q;
  q.sf = p.sf;
  return q;
}

// The band that holds row `row`.
const detail::TransposedBand& band_of(const detail::CastTransposeProblem& p, std::int64_t row) {
  const auto after = std::upper_bound(p.bands.begin(), p.bands.end(), row,
                                      [](std::int64_t r, const detail::TransposedBand& b) { return r < b.first_row; });
  return *(after - 1);
}

// The transposed codes and scales of the columns [col, col + cols) of rows [row, row + rows), one 128 x 1 block
// per column.
void transpose_tile(const detail::CastTransposeProblem& p, std::int64_t row, std::int64_t rows, std::int64_t col,
                    std::int64_t cols) {
  const detail::TransposedBand& band = band_of(p, row);
  for (std::int64_t c = col; c < col + cols; ++c) {
    float amax = 0.0f;  // NaN where the block holds one (as PyTorch's amax)
    for (std::int64_t r = row; r < row + rows && !std::isnan(amax); ++r) {
      const float magnitude = std::fabs(input_at(p, r, c));
      amax = std::isnan(magnitude) ? magnitude : std::max(amax, magnitude);
    }
    const E4m3Scale s = e4m3_scale_of(amax, p.use_ue8m0);
    const std::int64_t transposed_row = band.offset + c * band.row_stride;
    for (std::int64_t r = row; r < row + rows; ++r)
      p.qt[transposed_row + r - band.first_row] = e4m3_from_float(input_at(p, r, c) * s.inverse);
    p.sft.data[p.sft.offset(0, c, row / kBlock)] = s.scale;
  }
}

// The transposed codes and scales of 128 x 128 blocks, each matrix of the stack's: the row-wise ones (one scale
// per block), transposed.
void transpose_blocks(const detail::CastTransposeProblem& p) {
  const detail::TransposedBand& band = p.bands.front();
  ThreadPool::instance().run(p.groups * p.cols, [&](std::int64_t index) {
    const std::int64_t g = index / p.cols, c = index % p.cols;
    std::uint8_t* transposed_row = p.qt + g * p.qt_group_stride + band.offset + c * band.row_stride;
    for (std::int64_t r = 0; r < p.rows; ++r) transposed_row[r] = p.q.data[p.q.offset(g, r, c)];
  });
  for (std::int64_t g = 0; g < p.groups; ++g)
    for (std::int64_t rb = 0; rb < p.row_blocks(); ++rb)
      for (std::int64_t cb = 0; cb < p.col_blocks(); ++cb)
        p.sft.data[p.sft.offset(g, cb, rb)] = p.sf.data[p.sf.offset(g, rb, cb)];
}

}  // namespace

void cast_transpose(const detail::CastTransposeProblem& p) {
  if (p.pads_rows()) {
    // The rows as the outputs hold them, each expert's padded with zero rows: then every band is x's own.
    const std::size_t element = dtype_size(p.input);
    std::vector<std::uint8_t> padded(static_cast<std::size_t>(p.rows * p.cols) * element, 0);
    detail::CastTransposeProblem on_padded = p;
    on_padded.x = {padded.data(), 0, p.cols, 1};
    for (detail::TransposedBand& band : on_padded.bands) {
      ThreadPool::instance().run(band.x_rows, [&](std::int64_t r) {
        std::memcpy(padded.data() + (band.first_row + r) * p.cols * element,
                    static_cast<const std::uint8_t*>(p.x.data) + p.x.offset(0, band.x_first_row + r, 0) * element,
                    p.cols * element);
      });
      band.x_first_row = band.first_row;
      band.x_rows = band.rows;
    }
    cast_transpose(on_padded);
    return;
  }
  quantize(row_wise(p));
  if (p.block == detail::ScaleBlock::Block) {
    transpose_blocks(p);
    return;
  }
  const std::int64_t row_blocks = p.row_blocks(), col_blocks = p.col_blocks();
  ThreadPool::instance().run(row_blocks * col_blocks, [&](std::int64_t index) {
    const std::int64_t row = index / col_blocks * kBlock, col = index % col_blocks * kBlock;
    transpose_tile(p, row, std::min(kBlock, p.rows - row), col, std::min(kBlock, p.cols - col));
  });
}

}  // namespace fgemm::cpu
