#include "cuda/kernel_config.hpp"

namespace fgemm::cuda {

int KernelConfig::swizzle_d_bytes() const {
  const int row_bytes = staged_cols() * output_bytes();
  for (int swizzle : {128, 64, 32})
    if (row_bytes % swizzle == 0) return swizzle;
  return 0;
}

int KernelConfig::smem_bytes() const {
  const int staging_d = block_m * block_n * output_bytes() / staging_passes();
  // A and B, and sfa of the tile's rows.
  const int stage = (block_m + block_n) * kBlockK + block_m * 4;
  const int barriers = num_stages * 2 * 8;
  return staging_d + num_stages * stage + barriers;
}

std::string KernelConfig::name() const {
  return std::string("fgemm_sm90_") + detail::layout_name(shape.layout) + "_n" + std::to_string(shape.n) + "_k" +
         std::to_string(shape.k) + (shape.output_f32 ? "_f32" : "_bf16") + (shape.has_c ? "_c" : "") +
         (shape.sfa_by_tma ? "" : "_sfa_rows") + "_bm" + std::to_string(block_m) + "_bn" + std::to_string(block_n) +
         "_s" + std::to_string(num_stages) + "_r" + std::to_string(band_m) + "_c" + std::to_string(cluster_m) + "x" +
         std::to_string(cluster_n);
}

}  // namespace fgemm::cuda
