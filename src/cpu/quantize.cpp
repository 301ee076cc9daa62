#include "cpu/quantize.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cpu/bf16.hpp"
#include "cpu/thread_pool.hpp"

namespace fgemm::cpu {
namespace {

constexpr std::int64_t kBlock = 128;
constexpr float kAmaxFloor = 1e-4f;
constexpr float kE4m3Max = 448.0f;
constexpr float kInverseE4m3Max = 1.0f / 448.0f;  // fl(1/448): the FP32 nearest

// 2^ceil(log2(s)) for a positive normal s, exactly: s itself when it is a power of two, else the next one.
// Infinity and NaN stay as they are.
float power_of_two_at_least(float s) {
  std::uint32_t bits;
  std::memcpy(&bits, &s, sizeof bits);
  const std::uint32_t exponent = bits >> 23;
  if (exponent == 0xFF || (bits & 0x7FFFFFu) == 0) return s;
  bits = (exponent + 1) << 23;
  std::memcpy(&s, &bits, sizeof s);
  return s;
}

// One scaling block: rows [row, row + rows) and columns [col, col + cols) of one group.
struct Tile {
  std::int64_t group, row, rows, col, cols;
};

// Element (r, c) of the tile, in FP32.
float input_at(const detail::QuantizeProblem& p, const Tile& t, std::int64_t r, std::int64_t c) {
  const std::int64_t offset = p.x.offset(t.group, t.row + r, t.col + c);
  return p.input == DType::BF16 ? float_from_bf16(static_cast<const std::uint16_t*>(p.x.data)[offset])
                                : static_cast<const float*>(p.x.data)[offset];
}

// The largest |x| of the tile, or NaN when it holds a NaN (as PyTorch's amax).
float tile_amax(const detail::QuantizeProblem& p, const Tile& t) {
  float amax = 0.0f;
  for (std::int64_t r = 0; r < t.rows; ++r)
    for (std::int64_t c = 0; c < t.cols; ++c) {
      const float magnitude = std::fabs(input_at(p, t, r, c));
      if (std::isnan(magnitude)) return magnitude;
      amax = std::max(amax, magnitude);
    }
  return amax;
}

void quantize_tile(const detail::QuantizeProblem& p, const Tile& t) {
  const E4m3Scale s = e4m3_scale_of(tile_amax(p, t), p.use_ue8m0);
  for (std::int64_t r = 0; r < t.rows; ++r)
    for (std::int64_t c = 0; c < t.cols; ++c)
      p.q.data[p.q.offset(t.group, t.row + r, t.col + c)] = e4m3_from_float(input_at(p, t, r, c) * s.inverse);
  const std::int64_t scale_row = p.block == detail::ScaleBlock::Token ? t.row : t.row / kBlock;
  p.sf.data[p.sf.offset(t.group, scale_row, t.col / kBlock)] = s.scale;
}

}  // namespace

E4m3Scale e4m3_scale_of(float block_amax, bool use_ue8m0) {
  const float amax = std::isnan(block_amax) ? block_amax : std::max(block_amax, kAmaxFloor);
  const float scale = amax * kInverseE4m3Max;
  if (use_ue8m0) {
    const float rounded = power_of_two_at_least(scale);
    return {rounded, 1.0f / rounded};
  }
  return {scale, (1.0f / amax) * kE4m3Max};
}

std::uint8_t e4m3_from_float(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const auto sign = static_cast<std::uint8_t>((bits >> 24) & 0x80u);
  const float magnitude = std::fabs(value);
  if (std::isnan(value)) return sign | 0x7F;
  // 448 is the largest value; what lies above rounds to it or saturates to it.
  if (magnitude >= kE4m3Max) return sign | 0x7E;
  // Below 2^-6 the subnormals step by 2^-9; code 8, the rounding's largest result, is 2^-6 itself.
  if (magnitude < 0x1p-6f) return sign | static_cast<std::uint8_t>(std::nearbyint(magnitude * 0x1p9f));
  int exponent;
  std::frexp(magnitude, &exponent);  // magnitude in [2^(exponent - 1), 2^exponent)
  const int e = exponent - 1;        // -6 .. 8, stored with a bias of 7
  // Eight steps of 2^(e - 3) per binade; rounding up to 16 steps carries into the next exponent.
  const int steps = static_cast<int>(std::nearbyint(std::ldexp(magnitude, 3 - e)));
  return sign | static_cast<std::uint8_t>(((e + 7) << 3) + steps - 8);
}

void quantize(const detail::QuantizeProblem& p) {
  const std::int64_t rows_per_tile = p.block == detail::ScaleBlock::Token ? 1 : kBlock;
  const std::int64_t tile_rows = p.scale_rows(), col_blocks = p.col_blocks();
  ThreadPool::instance().run(p.groups * tile_rows, [&](std::int64_t index) {
    const std::int64_t group = index / tile_rows, row = index % tile_rows * rows_per_tile;
    const std::int64_t rows = std::min(rows_per_tile, p.rows - row);
    for (std::int64_t kb = 0; kb < col_blocks; ++kb)
      quantize_tile(p, Tile{group, row, rows, kb * kBlock, std::min(kBlock, p.cols - kb * kBlock)});
  });
}

void copy_scales(const detail::ScaleCopyProblem& p) {
  for (std::int64_t g = 0; g < p.groups; ++g)
    for (std::int64_t r = 0; r < p.rows; ++r)
      for (std::int64_t c = 0; c < p.cols; ++c) p.dst.data[p.dst.offset(g, r, c)] = p.src.data[p.src.offset(g, r, c)];
}

}  // namespace fgemm::cpu
