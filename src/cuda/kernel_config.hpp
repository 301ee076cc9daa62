// The configuration of one sm90 GEMM kernel: what the heuristics choose, what the source generator bakes in
// and what the launcher needs. Its tiling is the kernel's own TileConfig (kernels/fgemm/sm90/tile_config.cuh),
// so every derived number (warpgroups, boxes, staging, shared memory) is computed by the same code on both
// sides.
#pragma once

#include <cstdint>
#include <string>

#include "core/problem.hpp"
#include "fgemm/sm90/tile_config.cuh"

namespace fgemm::cuda {

// What a kernel is specialised for, besides the tiling: the problem's fixed dimensions and epilogue.
struct KernelShape {
  detail::GemmLayout layout = detail::GemmLayout::Normal;
  std::int64_t n = 0;
  std::int64_t k = 0;
  bool output_f32 = false;
  bool has_c = false;
  // sfa is MN-major with 16-byte aligned columns: the TMA thread loads it with A (the fast path); otherwise
  // a warp of the producer copies it scale by scale.
  bool sfa_by_tma = false;
  // The kind of GEMM: E4M3 with the FP8 recipe's scales, or BF16 / F16 without scales (the 16-bit output is
  // then of the input type).
  DType ab_dtype = DType::E4M3;
  bool a_mn_major = false;  // A stored [K, M]
  bool b_mn_major = false;  // B stored [K, N]
  bool psum = false;        // contiguous: the experts' rows named by prefix sums
};

struct KernelConfig : sm90::TileConfig {
  KernelShape shape;
  int band_m = 8;   // tile rows per rasterization band (L2 reuse)
  int num_sms = 0;  // persistent CTAs launched (at most one per SM)

  // Whether the kind is FP8's scaled recipe, which the next two describe
  // (kernels/fgemm/sm90/fp8_block_scaled_plan.cuh).
  bool scaled() const { return shape.ab_dtype == DType::E4M3; }
  bool two_partials() const;
  int column_halves() const;
  // The N of each wgmma: FP8's plan says; unscaled kinds multiply a warpgroup's columns at once.
  int mma_n() const;
  int smem_bytes() const;
  // A unique, readable name of the configuration (of what the kernel is compiled with: output_bytes, not
  // shape.output_f32, which the heuristics translate into it): the key of the kernel caches.
  std::string name() const;
};

}  // namespace fgemm::cuda
