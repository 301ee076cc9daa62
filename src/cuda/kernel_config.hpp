// The compile-time configuration of one sm90 GEMM kernel: what the heuristics choose, what the source
// generator bakes in, and what the launcher needs. Mirrors fgemm::sm90::GemmConfig in kernels/.
#pragma once

#include <cstdint>
#include <string>

#include "core/problem.hpp"

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
};

struct KernelConfig {
  KernelShape shape;
  int block_m = 128;
  int block_n = 128;
  int num_stages = 4;
  int band_m = 8;  // tile rows per rasterization band (L2 reuse)
  // Clusters of two CTAs: side by side along M they share (multicast) B, along N they share A.
  int cluster_m = 1;
  int cluster_n = 1;
  int num_sms = 0;  // persistent CTAs launched (at most one per SM)

  static constexpr int kBlockK = 128;

  // Math warpgroups: three along M for BLOCK_M 192, two along M for 128, two along N for 64.
  int num_math_warpgroups() const { return block_m == 192 ? 3 : 2; }
  int num_threads() const { return 128 * (num_math_warpgroups() + 1); }
  int warpgroup_cols() const { return block_m == 64 ? 2 : 1; }
  int warpgroup_n() const { return block_n / warpgroup_cols(); }
  // Whether a math warpgroup has a second partial accumulator, to promote one K block while the next one's
  // MMAs run: where the registers allow it (the kernel's GemmConfig::kTwoPartials; the generated source
  // asserts that the two agree).
  bool two_partials() const { return warpgroup_n() <= (num_math_warpgroups() == 3 ? 64 : 128); }
  // A warpgroup of more than 160 columns multiplies them in two halves (the kernel's kColumnHalves), each
  // with wgmma of N = mma_n().
  int column_halves() const { return warpgroup_n() > 160 ? 2 : 1; }
  int mma_n() const { return warpgroup_n() / column_halves(); }
  // D is staged in shared memory for its TMA store whole, or, where a fourth stage of 128 x 256 tiles takes
  // the room, one column half at a time (the kernel's kStagingPasses).
  int staging_passes() const { return column_halves() == 2 && num_stages >= 4 ? 2 : 1; }
  int staged_cols() const { return warpgroup_n() / staging_passes(); }  // the kernel's kStagedCols
  int cluster_size() const { return cluster_m * cluster_n; }
  // Rows of the TMA boxes of A and B: a shared operand is loaded in one slice per CTA of the cluster.
  int slice_rows_a() const { return cluster_n > 1 ? block_m / cluster_size() : block_m; }
  int slice_rows_b() const { return cluster_m > 1 ? block_n / cluster_size() : block_n; }
  int output_bytes() const { return shape.output_f32 ? 4 : 2; }
  // Width of the TMA-store swizzle of D: the widest of 128/64/32 bytes dividing a staged row (staged_cols()), or 0.
  int swizzle_d_bytes() const;
  // Shared memory the kernel takes: the same formula as its kSmemBytes (the generated source asserts they agree).
  int smem_bytes() const;
  // A unique, readable name of the configuration: the key of the kernel caches.
  std::string name() const;
};

}  // namespace fgemm::cuda
