#include "cuda/kernel_config.hpp"

#include "fgemm/sm90/block_scaled_plan.cuh"
#include "fgemm/sm90/row_blocks_plan.cuh"

namespace fgemm::cuda {

bool KernelConfig::two_partials() const {
  return shape.scaling == detail::Scaling::RowBlocks ? sm90::row_blocks::two_partials(*this)
                                                     : sm90::block_scaled::two_partials(*this);
}

int KernelConfig::column_halves() const { return sm90::block_scaled::column_halves(*this); }

int KernelConfig::mma_n() const { return block_scaled() ? sm90::block_scaled::mma_n(*this) : warpgroup_n(); }

int KernelConfig::smem_bytes() const {
  const bool row_blocks = shape.scaling == detail::Scaling::RowBlocks;
  const int stage_extra_bytes = block_scaled() ? sm90::block_scaled::stage_extra_bytes(*this)
                                : row_blocks   ? sm90::row_blocks::stage_extra_bytes(*this)
                                               : 0;
  return TileConfig::smem_bytes(stage_extra_bytes);
}

namespace {

const char* kind_name(const KernelShape& shape) {
  switch (shape.ab_dtype) {
    case DType::BF16: return "bf16_";
    case DType::F16: return "fp16_";
    case DType::I8:
      return shape.scaling == detail::Scaling::None      ? "int8_exact_"
             : shape.scaling == detail::Scaling::RowColumn ? "int8_rowcol_"
                                                           : "int8_block_";
    default: return shape.scaling == detail::Scaling::RowBlocks ? "1d1d_" : "";  // FP8 1D2D named as it always was
  }
}

const char* bias_name(const KernelShape& shape) {
  if (!shape.has_bias) return "";
  return shape.bias_dtype == DType::F32 ? "_bias_f32" : shape.bias_dtype == DType::F16 ? "_bias_fp16" : "_bias_bf16";
}

const char* output_name(const KernelConfig& config) {
  if (config.output_bytes == 4) return "_f32";
  return config.output_f16 ? "_fp16" : "_bf16";
}

// A C of its own: FP32, or D's 16-bit type, and the chunks its ring holds.
std::string c_name(const KernelConfig& config) {
  return (config.c_bytes == 2 ? "_c16_ring" : "_c_ring") + std::to_string(config.c_slots);
}

}  // namespace

std::string KernelConfig::name() const {
  const std::string storage =
      block_scaled() ? "" : std::string("_") + (shape.a_mn_major ? "t" : "n") + (shape.b_mn_major ? "n" : "t");
  return std::string("fgemm_sm90_") + kind_name(shape) + detail::layout_name(shape.layout) +
         (shape.psum ? "_psum" : "") + (shape.packed_d ? "_packed_d" : "") + storage + "_n" + std::to_string(shape.n) + "_k" + std::to_string(shape.k) +
         output_name(*this) + (shape.has_c ? c_name(*this) : "") +
         (shape.c_in_d ? "_add" : "") + bias_name(shape) +
         (block_scaled() && !shape.sfa_by_tma ? "_sfa_rows" : "") +
         (shape.scaling == detail::Scaling::RowBlocks && !shape.sfa_by_tma ? "_scale_rows" : "") + "_bm" +
         std::to_string(block_m) + "_bn" + std::to_string(block_n) + "_s" + std::to_string(num_stages) + "_r" +
         std::to_string(band_m) + "_c" + std::to_string(cluster_m) + "x" + std::to_string(cluster_n) +
         (split_k > 1 ? "_sk" + std::to_string(split_k) : "") +
         (a_rows > 0 ? "_ar" + std::to_string(a_rows) : "") + (alternate_k_blocks ? "_alt" : "") +
         (staged_in_halves ? "_halves" : "");
}

}  // namespace fgemm::cuda
