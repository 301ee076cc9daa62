// The parameter block of the few-row kernel (sm90/few_rows_kernel.cuh) and the numbers of its geometry, declared
// once for NVRTC and for the host that chooses, fills and launches it (src/cuda/few_rows.cpp).
#pragma once

#include "fgemm/common.cuh"

namespace fgemm::few_rows {

// A CTA computes D's columns [8 c, 8 c + 8) for every row of A: the N of one mma.sync m16n8k16, whose eight upper
// rows are A's (at most eight) and whose eight lower rows are zeros.
constexpr uint32_t kColumnsPerCta = 8;
constexpr uint32_t kMaxRows = 8;
// A lane loads 16 bytes of a row of B (eight 16-bit elements) at a time; the four lanes of a row cover 32 of its K.
constexpr uint32_t kVectorElements = 8;
constexpr uint32_t kChunkK = 4 * kVectorElements;

struct Params {
  const void* a;  // [M, K], K contiguous
  const void* b;  // [N, K], K contiguous
  const void* c;  // [M, N] or null: FP32 or D's type, possibly D itself
  void* d;        // [M, N]
  uint32_t m, n, k;
  int64_t a_row_stride, b_row_stride, c_row_stride, d_row_stride;  // in elements
  // The K each CTA of a cluster sums (a multiple of kChunkK): CTA r of the cluster K [r * k_per_split, ...).
  uint32_t k_per_split;
};

}  // namespace fgemm::few_rows
