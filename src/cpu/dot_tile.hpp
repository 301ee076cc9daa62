// The loop of the dot kernels (DotKernel in kernel_set.hpp), shared by every kernel set: the set brings
// its Lanes, which say how its vectors are loaded, multiplied and summed.
//
// Internal linkage on purpose: the including files are compiled with different instruction-set flags (see
// avx512_common.hpp).
#pragma once

#include <cstdint>

#include "cpu/kernel_set.hpp"

namespace fgemm::cpu {
namespace {

// DotKernel for kTileRows rows of A and kTile / kTileRows rows of B. Lanes provides:
//   Element: the packed element type; Operand: a vector of them (what load returns);
//   Sum: a vector of kLanes FP32 lanes; kValues: the values of K one Operand holds;
//   zero(), load(const Element*), multiply_add(Sum, Operand a, Operand b), scale_add(float, Sum, Sum sum),
//   load_sum(const float*) and store_sum(float*, Sum) (64-byte aligned), total(Sum) (the sum of the lanes).
// Each (r, j) sum stays in kLanes lanes until the end: every lane is scaled once per K block like the whole
// block, which sums the same products in another order.
template <int kTileRows, int kTile, class Lanes>
void dot_tile(const void* packed_a, std::int64_t a_block_stride, const void* decoded_b, std::int64_t b_row_stride,
              std::int64_t k_len, const float* scales, std::int64_t scale_stride, float* lane_sums, bool first,
              bool last, float* out, std::int64_t out_stride) {
  constexpr int kTileCols = kTile / kTileRows;
  using Sum = typename Lanes::Sum;
  using Operand = typename Lanes::Operand;
  const auto* a = static_cast<const typename Lanes::Element*>(packed_a);
  const auto* b = static_cast<const typename Lanes::Element*>(decoded_b);
  Sum sum[kTileRows][kTileCols];
  for (int r = 0; r < kTileRows; ++r)
    for (int j = 0; j < kTileCols; ++j)
      sum[r][j] = first ? Lanes::zero() : Lanes::load_sum(lane_sums + (r * kTileCols + j) * Lanes::kLanes);
  // k_len and kc are at least 16, so every loop runs at least once; written as do-while because with a
  // zero-trip path GCC keeps a copy of the sums on the stack and stores to it every step.
  std::int64_t start = 0;
  do {
    const std::int64_t kc = k_len - start < kBlockK ? k_len - start : kBlockK;
    Sum partial[kTileRows][kTileCols];
    for (int r = 0; r < kTileRows; ++r)
      for (int j = 0; j < kTileCols; ++j) partial[r][j] = Lanes::zero();
    std::int64_t k = 0;
    do {  // past kc, the rows of A and B are zero-filled up to kPadK
      Operand b_values[kTileCols];
      for (int j = 0; j < kTileCols; ++j) b_values[j] = Lanes::load(b + j * b_row_stride + start + k);
      for (int r = 0; r < kTileRows; ++r) {
        const Operand a_values = Lanes::load(a + r * kBlockK + k);
        for (int j = 0; j < kTileCols; ++j) partial[r][j] = Lanes::multiply_add(partial[r][j], a_values, b_values[j]);
      }
    } while ((k += Lanes::kValues) < kc);
    for (int r = 0; r < kTileRows; ++r)
      for (int j = 0; j < kTileCols; ++j) sum[r][j] = Lanes::scale_add(scales[r], partial[r][j], sum[r][j]);
    a += a_block_stride;
    scales += scale_stride;
  } while ((start += kBlockK) < k_len);
  for (int r = 0; r < kTileRows; ++r)
    for (int j = 0; j < kTileCols; ++j) {
      if (last)
        out[r * out_stride + j] = Lanes::total(sum[r][j]);
      else
        Lanes::store_sum(lane_sums + (r * kTileCols + j) * Lanes::kLanes, sum[r][j]);
    }
}

// The dot kernels of a set whose tiles hold kTile (r, j) pairs.
template <int kTile, class Lanes>
constexpr DotKernels make_dot_kernels(DecodeRows decode_rows) {
  return {kTile,
          Lanes::kLanes,
          decode_rows,
          {dot_tile<1, kTile, Lanes>, dot_tile<2, kTile, Lanes>, dot_tile<4, kTile, Lanes>}};
}

}  // namespace
}  // namespace fgemm::cpu
