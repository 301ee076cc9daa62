// The instruction-set-specific half of the blocked GEMM (blocked_gemm.cpp drives it): how a block of A or
// B is decoded from E4M3 and packed, and the micro-kernels that multiply packed blocks.
//
// Each instruction set's kernel set lives in its own file compiled with that set's flags. This header is
// shared by files compiled with different flags, so it holds declarations only (no inline code).
#pragma once

#include <cstdint>

namespace fgemm::cpu {

// One block of K: the scales of DESIGN §1 change every 128 values of K, and so does the packed data.
constexpr std::int64_t kBlockK = 128;
// One tile of N: one row of sfb's blocks, so every tile has a single column scale per K block.
constexpr std::int64_t kBlockN = 128;
// The most rows a micro-kernel handles at once (the register budget of the widest kernel set).
constexpr int kMaxPanelRows = 14;

// The packers decode a span of K (k_len values, a multiple of 16) at once and read each row of A and B as
// one run of k_len bytes: the hardware prefetcher follows such runs, while 128-byte pieces of rows that are
// K bytes apart leave the loads waiting on memory (measured: several times slower to pack). The packed
// span holds one block per kBlockK values of K.

// Decodes rows [0, rows) x columns [0, k_len) of an E4M3 matrix (row stride in bytes) into packed A: block
// kb (K values [kb * kBlockK, ...)) starts at element kb * rows * kBlockK and is row-major with kBlockK
// elements per row, whatever the block's length.
using PackA = void (*)(const std::uint8_t* a, std::int64_t row_stride, std::int64_t rows, std::int64_t k_len,
                       void* packed);

// Decodes rows [0, cols) x columns [0, k_len) of B (its rows are the columns of D) into packed B: block kb
// starts at element kb * padded_cols * kBlockK (padded_cols: cols rounded up to panel_cols) and holds
// consecutive panels of panel_cols columns, each kc * panel_cols elements (kc: the block's length), in the
// order the micro-kernel reads them; columns past `cols` in the last panel are zero.
using PackB = void (*)(const std::uint8_t* b, std::int64_t row_stride, std::int64_t cols, std::int64_t k_len,
                       void* packed);

// For the panel_cols columns of one packed B panel and the rows of one packed A block (the kernel's row
// count, kBlockK elements apart): partial = A . B over kc values of K (16 <= kc <= kBlockK) in FP32, then
// acc[r][c] = row_scales[r] * partial[r][c] when first_block, acc[r][c] += row_scales[r] * partial[r][c]
// otherwise.
using MicroKernel = void (*)(const void* packed_a, const void* packed_b, std::int64_t kc, const float* row_scales,
                             float* acc, std::int64_t acc_stride, bool first_block);

struct KernelSet {
  int max_rows;              // micro_kernels[r - 1] handles r rows, for r in [1, max_rows]
  int panel_cols;            // columns of every micro-kernel; divides kBlockN
  int packed_element_bytes;  // 4 (FP32) or 2 (BF16)
  PackA pack_a;
  PackB pack_b;
  MicroKernel micro_kernels[kMaxPanelRows];
};

extern const KernelSet kScalarKernels;
extern const KernelSet kAvx2Kernels;
extern const KernelSet kAvx512Kernels;
extern const KernelSet kAvx512Bf16Kernels;

}  // namespace fgemm::cpu
