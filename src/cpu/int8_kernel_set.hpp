// The instruction-set-specific half of the INT8 GEMM (int8_blocked_gemm.cpp drives it): how A and B are packed
// for the integer micro-kernels, and the micro-kernels, which sum the products of int8 values exactly in INT32
// (wrapping modulo 2^32, as torch._int_mm does).
//
// Each instruction set's kernels live in their own file compiled with that set's flags; like kernel_set.hpp,
// this header holds declarations only.
#pragma once

#include <cstdint>

#include "cpu/kernel_set.hpp"

namespace fgemm::cpu {

// The most rows an INT8 micro-kernel handles at once: two AMX tiles of 16 rows.
constexpr int kInt8MaxPanelRows = 32;

// Packed A: row r of K block kb (kBlockK values of K) starts at byte (kb * packed_rows + r) * kBlockK *
// packed_element_bytes, and every block is whole: past the matrix's last value of K it holds the set's code
// of 0. Packs rows [0, rows) x K [0, k_len) of A (row stride in bytes; k_len from a K block boundary) into its
// ceil(k_len / kBlockK) blocks, with packed_rows >= rows.
using PackInt8A = void (*)(const std::int8_t* a, std::int64_t row_stride, std::int64_t rows, std::int64_t k_len,
                           std::int64_t packed_rows, void* packed);

// Packed B: columns [0, cols) x K [0, k_len) of B (its rows are the columns of D; row stride in bytes) in
// panels of panel_cols columns, one after another; a panel holds its ceil(k_len / kBlockK) K blocks one after
// another, b_block_bytes each, in the order the micro-kernels read them. Columns past `cols` and values past
// k_len are zero.
using PackInt8B = void (*)(const std::int8_t* b, std::int64_t row_stride, std::int64_t cols, std::int64_t k_len,
                           void* packed);

// The kernel's rows of packed A (their first K block at packed_a, each next one a_block_stride bytes on) times
// one packed B panel, over k_len values of K (from a K block boundary; a multiple of 16): sums[r][c] = the
// INT32 sum of the products (first) or sums[r][c] += it, row r of the sums at sums + r * sums_stride.
using Int8SumKernel = void (*)(const void* packed_a, std::int64_t a_block_stride, const void* packed_b,
                               std::int64_t k_len, std::int32_t* sums, std::int64_t sums_stride, bool first);

// One K block of kc values (a multiple of 16, at most kBlockK) of the kernel's rows of packed A times one
// packed B panel: partial = the INT32 sums of the products, then acc[r][c] = row_scales[r] * float(partial[r][c])
// when first_block, acc[r][c] += row_scales[r] * float(partial[r][c]) otherwise (DeepSeek's promotion of each
// K block into FP32).
using Int8BlockKernel = void (*)(const void* packed_a, const void* packed_b, std::int64_t kc, const float* row_scales,
                                 float* acc, std::int64_t acc_stride, bool first_block);

// values[j] = (row_scale * column_scales[j]) * float(sums[j]), plus bias[j] where bias is not null, for j in
// [0, cols): a row of INT32 sums of the per-token / per-channel recipe (Scaling::RowColumn) in FP32.
using ScaleInt8Row = void (*)(const std::int32_t* sums, float row_scale, const float* column_scales, const float* bias,
                              std::int64_t cols, float* values);

struct Int8KernelSet {
  int packed_element_bytes;  // of packed A: 1, or 2 where the set widens A to 16 bits
  // Packed A and the sums hold each row block's rows in groups of this many, the last one filled up with
  // zero rows (in packed A) and rows the driver never reads (in the sums): the kernels work on whole groups.
  int row_granule;
  int max_rows;                // sum_kernels[r - 1] and block_kernels[r - 1] handle r rows, r a multiple of row_granule
  int panel_cols;              // columns of every micro-kernel; divides kBlockN
  std::int64_t b_block_bytes;  // one K block of one packed B panel (PackInt8B)
  PackInt8A pack_a;
  PackInt8B pack_b;
  Int8SumKernel sum_kernels[kInt8MaxPanelRows];
  Int8BlockKernel block_kernels[kInt8MaxPanelRows];
  ScaleInt8Row scale_row;
  const KernelSet* output;  // the kernel set whose write_bf16_row and write_f16_row round D (write_d)
  // Called by the thread that runs a work unit before and after it, where the micro-kernels need per-thread
  // state (AMX: the tile configuration); null for the sets that need none.
  void (*begin_micro_kernels)();
  void (*end_micro_kernels)();
};

extern const Int8KernelSet kScalarInt8Kernels;
extern const Int8KernelSet kAvx2Int8Kernels;
extern const Int8KernelSet kAvx512VnniInt8Kernels;
extern const Int8KernelSet kAmxInt8Kernels;

}  // namespace fgemm::cpu
