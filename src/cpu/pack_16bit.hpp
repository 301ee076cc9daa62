// The packers of BF16 and FP16 operands (Packers16 in kernel_set.hpp) for every kernel set, in plain C++ that
// the compiler vectorises for the instruction set of the including file: a set brings its element type (FP32,
// or BF16 bit patterns where its kernels multiply BF16) and the width of its micro-kernels' panels. Each
// packer reads the operand's contiguous dimension innermost, so both storage orders are read in runs.
//
// Internal linkage on purpose: the including files are compiled with different instruction-set flags (see
// avx512_common.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cpu/f16.hpp"
#include "cpu/kernel_set.hpp"

namespace fgemm::cpu {
namespace {

// A 16-bit value as Element, exactly: FP32 (BF16 widened, FP16 converted) or a BF16 bit pattern (a BF16
// operand's, copied).
template <class Element, bool kF16>
Element element_of(std::uint16_t value) {
  if constexpr (std::is_same_v<Element, float>) {
    if constexpr (kF16) return float_from_f16(value);
    const std::uint32_t bits = static_cast<std::uint32_t>(value) << 16;
    float widened;
    std::memcpy(&widened, &bits, sizeof widened);
    return widened;
  } else {
    static_assert(std::is_same_v<Element, std::uint16_t> && !kF16, "BF16 elements hold BF16 operands only");
    return value;
  }
}

// Calls store(i, k, element) for every value of rows [0, rows) x K [0, k_len) of `m`, in the order of its
// storage.
template <class Element, bool kF16, class Store>
void for_each_value(const Matrix16& m, std::int64_t rows, std::int64_t k_len, Store store) {
  if (m.k_stride == 1) {
    for (std::int64_t i = 0; i < rows; ++i) {
      const std::uint16_t* row = m.data + i * m.i_stride;
      for (std::int64_t k = 0; k < k_len; ++k) store(i, k, element_of<Element, kF16>(row[k]));
    }
  } else {  // MN-major: i_stride is 1
    for (std::int64_t k = 0; k < k_len; ++k) {
      const std::uint16_t* values = m.data + k * m.k_stride;
      for (std::int64_t i = 0; i < rows; ++i) store(i, k, element_of<Element, kF16>(values[i]));
    }
  }
}

// Pack16A: PackA's layout.
template <class Element, bool kF16>
void pack_a_16bit(const Matrix16& a, std::int64_t rows, std::int64_t k_len, std::int64_t k_valid,
                  std::int64_t packed_rows, void* packed) {
  auto* out = static_cast<Element*>(packed);
  const auto at = [&](std::int64_t i, std::int64_t k) -> Element& {
    return out[(k / kBlockK * packed_rows + i) * kBlockK + k % kBlockK];
  };
  for_each_value<Element, kF16>(a, rows, k_valid,
                                [&](std::int64_t i, std::int64_t k, Element value) { at(i, k) = value; });
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t k = k_valid; k < k_len; ++k) at(i, k) = Element(0);
}

// Pack16B: PackB's layout, whose panels hold [kc][kPanelCols] values or, for BF16 elements, [kc / 2]
// [kPanelCols] pairs of neighbouring values of K (the unit that vdpbf16ps and the AMX tiles multiply).
template <class Element, bool kF16, int kPanelCols>
void pack_b_16bit(const Matrix16& b, std::int64_t cols, std::int64_t k_len, std::int64_t k_valid, void* packed) {
  const std::int64_t padded_cols = (cols + kPanelCols - 1) / kPanelCols * kPanelCols;
  auto* out = static_cast<Element*>(packed);
  std::fill_n(out, padded_cols * k_len, Element(0));  // the columns past `cols` and the values past k_valid
  for (std::int64_t block_start = 0; block_start < k_valid; block_start += kBlockK) {
    const std::int64_t kc = std::min(kBlockK, k_len - block_start);
    Element* block = out + block_start * padded_cols;
    const Matrix16 values{b.data + block_start * b.k_stride, b.i_stride, b.k_stride};
    for_each_value<Element, kF16>(values, cols, std::min(kc, k_valid - block_start),
                                  [&](std::int64_t c, std::int64_t k, Element value) {
                                    Element* panel = block + c / kPanelCols * kPanelCols * kc;
                                    const std::int64_t col = c % kPanelCols;
                                    if constexpr (sizeof(Element) == 2)
                                      panel[(k / 2 * kPanelCols + col) * 2 + k % 2] = value;
                                    else
                                      panel[k * kPanelCols + col] = value;
                                  });
  }
}

// Decode16Rows: DecodeRows' layout.
template <class Element, bool kF16>
void decode_rows_16bit(const Matrix16& b, std::int64_t rows, std::int64_t k_len, std::int64_t k_valid,
                       void* decoded) {
  const std::int64_t padded_k = (k_len + kPadK - 1) / kPadK * kPadK;
  auto* out = static_cast<Element*>(decoded);
  for_each_value<Element, kF16>(b, rows, k_valid,
                                [&](std::int64_t i, std::int64_t k, Element value) { out[i * padded_k + k] = value; });
  for (std::int64_t i = 0; i < rows; ++i) std::fill(out + i * padded_k + k_valid, out + (i + 1) * padded_k, Element(0));
}

// The packers of one input type (FP16 where kF16, else BF16) for a set of Element and kPanelCols.
template <class Element, bool kF16, int kPanelCols>
constexpr Packers16 make_packers_16bit() {
  return {pack_a_16bit<Element, kF16>, pack_b_16bit<Element, kF16, kPanelCols>, decode_rows_16bit<Element, kF16>};
}

}  // namespace
}  // namespace fgemm::cpu
