// The quantization kernels' parameter blocks, passed by value, and their launch geometry: declared once, for
// NVRTC and for the host that fills and launches them (src/cuda/quantize.cpp).
#pragma once

#include "fgemm/common.cuh"

namespace fgemm::quant {

constexpr uint32_t kBlock = 128;             // the side of a scaling block
constexpr uint32_t kElementsPerThread = 16;  // one 16-byte vector of E4M3 codes
constexpr uint32_t kThreadsPerCta = 256;
constexpr uint32_t kWarpsPerCta = kThreadsPerCta / 32;
constexpr uint32_t kColsPerWarp = 32 * kElementsPerThread;  // per token: a warp's pass over a row
constexpr uint32_t kScaleTile = 32;                         // copy_scales: a 32 x 32 tile per CTA

// A matrix or a stack of matrices: element (g, r, c) lies at data + offset(g, r, c), strides in elements.
template <typename T>
struct Stack {
  T* data;
  int64_t group_stride;
  int64_t row_stride;
  int64_t col_stride;

  __device__ int64_t offset(uint32_t g, uint64_t r, uint32_t c) const {
    return g * group_stride + static_cast<int64_t>(r) * row_stride + c * col_stride;
  }
};

struct QuantizeParams {
  Stack<const uint8_t> x;  // BF16 or FP32 elements, addressed as bytes; column stride 1
  Stack<uint8_t> q;        // column stride 1
  Stack<float> sf;         // one per row (per token) or per 128 rows (per block), per 128 columns
  uint32_t rows;
};

struct ScaleCopyParams {
  Stack<const float> src;
  Stack<float> dst;
  uint32_t rows;
  uint32_t cols;
};

}  // namespace fgemm::quant
