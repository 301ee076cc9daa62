// The instruction-set-specific half of the CPU backend (blocked_gemm.cpp and direct_gemm.cpp drive it): how
// A and B are decoded from E4M3 (or read as BF16 or FP16, in either storage order) and packed, the
// micro-kernels that multiply packed blocks, the dot kernels of the path for few rows, and D's rounding.
//
// Each instruction set's kernel set lives in its own file compiled with that set's flags. This header is
// shared by files compiled with different flags, so it holds declarations only (no inline code; code that
// the sets share lives in headers of internal linkage: avx512_common.hpp, dot_tile.hpp, pack_16bit.hpp).
#pragma once

#include <cstdint>

namespace fgemm::cpu {

// One block of K: the scales of ARCHITECTURE.md (Semantics) change every 128 values of K, and so does the packed data.
constexpr std::int64_t kBlockK = 128;
// One tile of N: one row of sfb's blocks, so every tile has a single column scale per K block.
constexpr std::int64_t kBlockN = 128;
// The most rows a micro-kernel handles at once: two AMX tiles of 16 rows (the AVX-512 sets' register budgets
// allow 14 at most).
constexpr int kMaxPanelRows = 32;

// The packers decode a span of K (k_len values, a multiple of 16) at once and read each row of A and B as
// one run of k_len bytes: the hardware prefetcher follows such runs, while 128-byte pieces of rows that are
// K bytes apart leave the loads waiting on memory (measured: several times slower to pack). The packed
// span holds one block per kBlockK values of K.

// Decoded rows of A and B are zero-filled past their last value of K up to a multiple of kPadK values, so
// that the BF16 dot kernels read whole vectors of 32 values (K itself is a multiple of 16 only).
constexpr std::int64_t kPadK = 32;

// Decodes rows [0, rows) x columns [0, k_len) of an E4M3 matrix (row stride in bytes) into packed A: row r
// of block kb (K values [kb * kBlockK, ...)) starts at element (kb * packed_rows + r) * kBlockK, whatever
// the block's length, and is zero-filled up to kPadK; packed_rows >= rows leaves room for the rows of a
// taller matrix, so that row ranges of one matrix can be packed apart.
using PackA = void (*)(const std::uint8_t* a, std::int64_t row_stride, std::int64_t rows, std::int64_t k_len,
                       std::int64_t packed_rows, void* packed);

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

// Decodes `rows` rows of B, k values each (row stride in bytes), into the kernels' element type, in the order
// of K: row r starts at element r * padded_k (padded_k: k rounded up to a multiple of kPadK) and is
// zero-filled past k.
using DecodeRows = void (*)(const std::uint8_t* b, std::int64_t row_stride, std::int64_t rows, std::int64_t k,
                            void* decoded);

// The dot kernels' tile: R rows of A times J = DotKernels::tile / R decoded rows of B, over one span of K
// (k_len values, starting at a K block boundary). A is packed A (PackA's layout: row r of K block kb at
// element kb * a_block_stride + r * kBlockK), B row j starts at element j * b_row_stride. Each (r, j) keeps a
// sum of DotKernels::lanes FP32 lanes between calls, at lane_sums + (r * J + j) * lanes (64-byte aligned): the
// products of each K block are summed in FP32 and scaled by scales[kb * scale_stride + r] (kb counted from
// the span's first block) into the lanes. `first` starts the lanes from zero; `last` writes the total of
// each (r, j)'s lanes to out[r * out_stride + j] instead of keeping the lanes.
using DotKernel = void (*)(const void* packed_a, std::int64_t a_block_stride, const void* decoded_b,
                           std::int64_t b_row_stride, std::int64_t k_len, const float* scales,
                           std::int64_t scale_stride, float* lane_sums, bool first, bool last, float* out,
                           std::int64_t out_stride);

// out[j] = sums[j] + c[j] (or sums[j] where c is null) rounded to BF16 as bf16_from_float does (to nearest,
// ties to even; a NaN stays a NaN, quietened), for j in [0, cols): one row of a BF16 D.
using WriteBf16Row = void (*)(const float* sums, const float* c, std::int64_t cols, std::uint16_t* out);
// The same for an FP16 D, rounded as f16_from_float does (to nearest, ties to even; past 65504 to infinity).
using WriteF16Row = void (*)(const float* sums, const float* c, std::int64_t cols, std::uint16_t* out);

// A BF16 or FP16 operand as the 16-bit packers read it, in either storage order: value (i, k), i a row of A
// or of B (a column of D) and k along K, at data[i * i_stride + k * k_stride] (elements; K-major operands have
// k_stride 1, MN-major ones i_stride 1).
struct Matrix16 {
  const std::uint16_t* data;
  std::int64_t i_stride;
  std::int64_t k_stride;
};

// The packers of 16-bit operands write the layouts of PackA, PackB and DecodeRows for k_len values of K (a
// multiple of kPadK) of which the first k_valid are the operand's and the rest zero: the CPU backend runs a
// 16-bit problem over K rounded up to kPadK, so that the kernels see whole vectors, and any K works.
using Pack16A = void (*)(const Matrix16& a, std::int64_t rows, std::int64_t k_len, std::int64_t k_valid,
                         std::int64_t packed_rows, void* packed);
using Pack16B = void (*)(const Matrix16& b, std::int64_t cols, std::int64_t k_len, std::int64_t k_valid, void* packed);
using Decode16Rows = void (*)(const Matrix16& b, std::int64_t rows, std::int64_t k_len, std::int64_t k_valid,
                              void* decoded);

// The packers of one 16-bit input type into a kernel set's element type.
struct Packers16 {
  Pack16A pack_a;
  Pack16B pack_b;
  Decode16Rows decode_rows;
};

// The row counts R of the dot kernels: DotKernels::kernels[i] handles kDotRows[i] rows.
constexpr int kDotRows[] = {1, 2, 4};

// The path of the dot kernels (direct_gemm.hpp).
struct DotKernels {
  int tile;   // R x J of every dot kernel: 4 or 8
  int lanes;  // FP32 lanes of one (r, j) sum
  DecodeRows decode_rows;
  DotKernel kernels[3];  // for each R in kDotRows
};

struct KernelSet {
  // Row blocks of up to this many rows take the path of the dot kernels, longer ones the micro-kernels:
  // where each is faster, measured with this set on N = 4096, K = 2048.
  int max_direct_rows;
  int packed_element_bytes;  // 4 (FP32) or 2 (BF16), in packed A, packed B and decoded B rows alike
  int max_rows;              // micro_kernels[r - 1] handles r rows, for r in [1, max_rows]
  int panel_cols;            // columns of every micro-kernel; divides kBlockN
  PackA pack_a;
  PackB pack_b;
  MicroKernel micro_kernels[kMaxPanelRows];
  // The same for problems whose row scales are all 1 (the 16-bit ones), where a set has faster ones that
  // rely on it (max_rows of them); null where it has none.
  const MicroKernel* unit_scale_micro_kernels;
  DotKernels dot;
  WriteBf16Row write_bf16_row;
  WriteF16Row write_f16_row;
  // BF16 and FP16 operands (kernel_set_16bit.hpp). The sets whose element type is BF16 have no FP16 packers
  // (all null): FP16 in BF16 would lose 3 bits of every value, so FP16 problems run an FP32 set instead.
  Packers16 bf16_packers;
  Packers16 f16_packers;
  // Called by each thread before and after its share of the blocked path, where the micro-kernels need
  // per-thread state (AMX: the tile configuration); null for the sets that need none.
  void (*begin_micro_kernels)();
  void (*end_micro_kernels)();
};

extern const KernelSet kScalarKernels;
extern const KernelSet kAvx2Kernels;
extern const KernelSet kAvx512Kernels;
extern const KernelSet kAvx512Bf16Kernels;
extern const KernelSet kAmxBf16Kernels;

}  // namespace fgemm::cpu
