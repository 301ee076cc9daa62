// The GEMM kernel's parameter block, passed by value: declared once, for NVRTC and for the host that fills
// it (src/cuda), so that the two cannot disagree on its layout.
#pragma once

#include "fgemm/common.cuh"

namespace fgemm::sm90 {

struct GemmParams {
  uint32_t m;  // rows of A and D: M, M_sum (contiguous) or M_max (masked, per group)
  uint32_t num_groups;
  const float* sfa;
  int64_t sfa_m_stride;
  int64_t sfa_k_stride;
  int64_t sfa_group_stride;
  const float* sfb;
  int64_t sfb_n_stride;
  int64_t sfb_k_stride;
  int64_t sfb_group_stride;
  const void* bias;  // INT8: [N], FP32 or D's 16-bit type (the kernel's epilogue knows which)
  void* d;  // for the row-filtered stores of partial tiles
  int64_t d_row_stride;
  int64_t d_group_stride;
  const int32_t* m_indices;
  const int32_t* psum;
  const int32_t* masked_m;
  const int32_t* ks;  // k-grouped: each expert's K
  // Packed D (the psum layout): expert g's first row in D, and D's rows; rows at or past d_rows are not written.
  const int32_t* d_row_starts;
  uint32_t d_rows;
};

// The k-grouped FP8 GEMM's operands are one K-major matrix per expert ([M, ks[g]] of A, [N, ks[g]] of B), each
// with its own row stride: each needs a tensor map of its own. The host encodes them and passes them by value
// as a kernel parameter (in the constant bank, with no copy to make or wait for), this many experts per
// launch; problems of more experts launch once per this many.
constexpr uint32_t kExpertMapsPerLaunch = 32;

// A CUtensorMap's 128 opaque bytes.
struct alignas(64) TensorMapBytes {
  uint64_t words[16];
};

struct ExpertTensorMaps {
  TensorMapBytes a[kExpertMapsPerLaunch];
  TensorMapBytes b[kExpertMapsPerLaunch];
};

}  // namespace fgemm::sm90
