#include "cuda/kernel_source.hpp"

#include <sstream>

#include "cuda/mma_instruction.hpp"

namespace fgemm::cuda {
namespace {

const char* cpp_bool(bool value) { return value ? "true" : "false"; }

const char* layout_enumerator(const KernelConfig& config) {
  switch (config.shape.layout) {
    case detail::GemmLayout::Normal: return "Normal";
    case detail::GemmLayout::Contiguous: return config.shape.psum ? "ContiguousPsum" : "Contiguous";
    case detail::GemmLayout::Masked: return "Masked";
    case detail::GemmLayout::KGrouped: return "KGrouped";
  }
  return "Normal";
}

MmaType mma_type(const KernelShape& shape) {
  switch (shape.ab_dtype) {
    case DType::BF16: return MmaType::Bf16F32;
    case DType::F16: return MmaType::F16F32;
    default: return MmaType::E4m3F32;
  }
}

const char* operand_policy(bool mn_major) {
  return mn_major ? "fgemm::sm90::MnMajorOperand<Config>" : "fgemm::sm90::KMajorOperand<Config>";
}

// The epilogue's transform: C read as the tile starts where the math threads have the registers for it
// (unscaled kinds), in the epilogue otherwise (epilogue_transform.cuh).
std::string transform_policy(const KernelConfig& config) {
  if (!config.shape.has_c) return "fgemm::sm90::Identity";
  return std::string("fgemm::sm90::AddC<Config::kShapeN, Config::kWarpgroupN / 2, ") + cpp_bool(!config.scaled()) +
         ">";
}

std::string operand_includes(const KernelShape& shape) {
  std::string includes;
  if (!shape.a_mn_major || !shape.b_mn_major) includes += "#include \"fgemm/sm90/operand_k_major.cuh\"\n";
  if (shape.a_mn_major || shape.b_mn_major) includes += "#include \"fgemm/sm90/operand_mn_major.cuh\"\n";
  return includes;
}

// The per-K-block math of the kind: FP8's scaled recipe (with sfa loaded by the TMA or by the helper warp), or
// none.
std::string math_policy(const KernelConfig& config) {
  if (!config.scaled()) return "fgemm::sm90::NoScaleMath<Config, fgemm::sm90::Wgmma>";
  return std::string("fgemm::sm90::Fp8BlockScaledMath<Config, fgemm::sm90::Wgmma, ") +
         cpp_bool(config.shape.sfa_by_tma) + ">";
}

}  // namespace

std::string gemm_kernel_source(const KernelConfig& config) {
  std::ostringstream out;
  out << "// " << config.name() << "\n"
      << "#include \"fgemm/sm90/epilogue_transform.cuh\"\n"
      << "#include \"fgemm/sm90/gemm_kernel.cuh\"\n"
      << "#include \"fgemm/sm90/" << (config.scaled() ? "math_fp8_block_scaled.cuh" : "math_no_scale.cuh") << "\"\n"
      << operand_includes(config.shape) << "\n"
      << mma_struct_source(mma_type(config.shape), config.mma_n(), config.shape.a_mn_major, config.shape.b_mn_major)
      << "\n"
      << "struct Tile {\n"
      << "  static constexpr fgemm::sm90::TileConfig value{" << config.block_m << ", " << config.block_n << ", "
      << config.num_stages << ", " << config.cluster_m << ", " << config.cluster_n << ", " << config.output_bytes
      << ", " << config.operand_bytes << ", " << cpp_bool(config.output_f16) << ", " << config.split_k << "};\n"
      << "};\n"
      << "using Config = fgemm::sm90::GemmConfig<Tile, " << config.shape.n << ", " << config.shape.k
      << ", fgemm::sm90::Layout::" << layout_enumerator(config) << ", " << config.band_m << ">;\n"
      << "using Kernel = fgemm::sm90::GemmKernel<Config, " << operand_policy(config.shape.a_mn_major) << ",\n"
      << "    " << operand_policy(config.shape.b_mn_major) << ",\n"
      << "    " << math_policy(config) << ",\n"
      << "    " << transform_policy(config) << ">;\n"
      << "static_assert(Kernel::kSmemBytes == " << config.smem_bytes()
      << ", \"the host's shared-memory size agrees with the kernel's\");\n\n"
      << "extern \"C\" __global__ void __launch_bounds__(Config::kNumThreads, 1)\n"
      << kGemmKernelSymbol << "(const fgemm::sm90::GemmParams params,\n"
      << "    const __grid_constant__ fgemm::ptx::TensorMap tmap_a,\n"
      << "    const __grid_constant__ fgemm::ptx::TensorMap tmap_b,\n"
      << "    const __grid_constant__ fgemm::ptx::TensorMap tmap_sfa,\n"
      << "    const __grid_constant__ fgemm::ptx::TensorMap tmap_d) {\n"
      << "  Kernel::run(params, &tmap_a, &tmap_b, &tmap_sfa, &tmap_d);\n"
      << "}\n";
  return out.str();
}

}  // namespace fgemm::cuda
