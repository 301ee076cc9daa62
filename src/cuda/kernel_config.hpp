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
  bool output_f32 = false;  // a 4-byte D: FP32, or INT32 (INT8's exact sums)
  bool has_c = false;  // a C of its own, read by the epilogue
  bool c_in_d = false;  // C is D itself (FP32, accumulation in place): the epilogue's store adds to D
  bool c_of_d_type = false;  // C has D's 16-bit type (BF16 or FP16) rather than FP32
  // sfa (and, for the 1D1D recipe, sfb) is MN-major with 16-byte aligned columns: the TMA thread loads it with A
  // (the fast path); otherwise a warp of the producer copies it scale by scale.
  bool sfa_by_tma = false;
  // The kind of GEMM: its input type (E4M3, BF16, F16 or I8) and how its scales apply (detail::Scaling: FP8
  // Block or RowBlocks (1D1D), the 16-bit types None, INT8 Block, None or RowColumn; INT8 None is D int32, the
  // exact sums).
  DType ab_dtype = DType::E4M3;
  bool a_mn_major = false;  // A stored [K, M]
  bool b_mn_major = false;  // B stored [K, N]
  bool psum = false;        // contiguous: the experts' rows named by prefix sums
  bool packed_d = false;    // psum: D holds the experts' rows without their padding (d_row_starts)
  detail::Scaling scaling = detail::Scaling::Block;
  bool output_f16 = false;  // a 16-bit D is FP16 rather than BF16
  // INT8: a bias per column of D, of bias_dtype (FP32 or D's 16-bit type).
  bool has_bias = false;
  DType bias_dtype = DType::F32;

  // Whether the epilogue reads C's values: its own, or those of D that it adds to.
  bool reads_c() const { return has_c || c_in_d; }
};

struct KernelConfig : sm90::TileConfig {
  KernelShape shape;
  int band_m = 8;   // tile rows per rasterization band (L2 reuse)
  int num_sms = 0;  // persistent CTAs launched (at most one per SM)

  // Whether the kind runs the block recipe (FP8 or INT8; kernels/fgemm/sm90/block_scaled_plan.cuh).
  bool block_scaled() const { return shape.scaling == detail::Scaling::Block; }
  // The k-grouped layout with K-major operands (FP8): a tensor map per expert (ExpertTensorMaps).
  bool expert_maps() const { return shape.layout == detail::GemmLayout::KGrouped && !shape.a_mn_major; }
  // Whether each math warpgroup keeps two partial accumulators (the plan of FP8's recipe, block or 1D1D:
  // block_scaled_plan.cuh, row_blocks_plan.cuh).
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
