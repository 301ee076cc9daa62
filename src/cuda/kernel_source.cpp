#include "cuda/kernel_source.hpp"

#include <sstream>

#include "cuda/mma_instruction.hpp"

namespace fgemm::cuda {
namespace {

const char* cpp_bool(bool value) { return value ? "true" : "false"; }

const char* layout_enumerator(const KernelConfig& config) {
  switch (config.shape.layout) {
    case detail::GemmLayout::Normal: return "Normal";
    case detail::GemmLayout::Contiguous: return "Contiguous";
    case detail::GemmLayout::Masked: return "Masked";
  }
  return "Normal";
}

}  // namespace

std::string gemm_kernel_source(const KernelConfig& config) {
  std::ostringstream out;
  out << "// " << config.name() << "\n"
      << "#include \"fgemm/sm90/epilogue_transform.cuh\"\n"
      << "#include \"fgemm/sm90/gemm_kernel.cuh\"\n"
      << "#include \"fgemm/sm90/math_fp8_block_scaled.cuh\"\n"
      << "#include \"fgemm/sm90/operand_k_major.cuh\"\n\n"
      << mma_struct_source(MmaType::E4m3F32, config.mma_n()) << "\n"
      << "struct Tile {\n"
      << "  static constexpr fgemm::sm90::TileConfig value{" << config.block_m << ", " << config.block_n << ", "
      << config.num_stages << ", " << config.cluster_m << ", " << config.cluster_n << ", " << config.output_bytes
      << ", " << config.operand_bytes << "};\n"
      << "};\n"
      << "using Config = fgemm::sm90::GemmConfig<Tile, " << config.shape.n << ", " << config.shape.k
      << ", fgemm::sm90::Layout::" << layout_enumerator(config) << ", " << config.band_m << ">;\n"
      << "using Kernel = fgemm::sm90::GemmKernel<Config, fgemm::sm90::KMajorOperand<Config>,\n"
      << "    fgemm::sm90::Fp8BlockScaledMath<Config, fgemm::sm90::Wgmma, " << cpp_bool(config.shape.sfa_by_tma)
      << ">,\n"
      << "    " << (config.shape.has_c ? "fgemm::sm90::AddC<Config::kShapeN>" : "fgemm::sm90::Identity") << ">;\n"
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
