#include "cuda/kernel_config.hpp"

#include "fgemm/sm90/fp8_block_scaled_plan.cuh"

namespace fgemm::cuda {

bool KernelConfig::two_partials() const { return sm90::fp8_block_scaled::two_partials(*this); }

int KernelConfig::column_halves() const { return sm90::fp8_block_scaled::column_halves(*this); }

int KernelConfig::mma_n() const { return sm90::fp8_block_scaled::mma_n(*this); }

int KernelConfig::smem_bytes() const {
  return TileConfig::smem_bytes(sm90::fp8_block_scaled::stage_extra_bytes(*this));
}

std::string KernelConfig::name() const {
  return std::string("fgemm_sm90_") + detail::layout_name(shape.layout) + "_n" + std::to_string(shape.n) + "_k" +
         std::to_string(shape.k) + (output_bytes == 4 ? "_f32" : "_bf16") + (shape.has_c ? "_c" : "") +
         (shape.sfa_by_tma ? "" : "_sfa_rows") + "_bm" + std::to_string(block_m) + "_bn" + std::to_string(block_n) +
         "_s" + std::to_string(num_stages) + "_r" + std::to_string(band_m) + "_c" + std::to_string(cluster_m) + "x" +
         std::to_string(cluster_n);
}

}  // namespace fgemm::cuda
