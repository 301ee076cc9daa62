#include "cuda/kernel_source.hpp"

#include <sstream>
#include <vector>

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
    case DType::I8: return MmaType::S8S32;
    default: return MmaType::E4m3F32;
  }
}

// A or B (`operand`: 'a' or 'b') K-major, or MN-major in the runs of M or N that its TileConfig gives it.
std::string operand_policy(bool mn_major, char operand) {
  if (!mn_major) return "fgemm::sm90::KMajorOperand<Config>";
  return std::string("fgemm::sm90::MnMajorOperand<Config, Config::kTile.mn_major_run_") + operand + "()>";
}

const char* bias_element(DType bias_dtype) {
  switch (bias_dtype) {
    case DType::BF16: return "fgemm::sm90::Bf16Bias";
    case DType::F16: return "fgemm::sm90::F16Bias";
    default: return "fgemm::sm90::Fp32Bias";
  }
}

// The epilogue's transforms, in order (epilogue_transform.cuh, epilogue_scales.cuh): INT8's scales per row and
// column, its bias, and C, from its ring in shared memory. An FP32 C that is D itself is no transform: the store
// adds to D.
std::string transform_policy(const KernelConfig& config) {
  const KernelShape& shape = config.shape;
  std::vector<std::string> steps;
  if (shape.scaling == detail::Scaling::RowColumn)
    steps.push_back("fgemm::sm90::RowColumnScales<Config::kShapeN, Config::kWarpgroupN / 2>");
  if (shape.has_bias)
    steps.push_back(std::string("fgemm::sm90::AddBias<Config::kShapeN, Config::kWarpgroupN / 2, ") +
                    bias_element(shape.bias_dtype) + ">");
  if (shape.has_c)
    steps.push_back("fgemm::sm90::AddC<Config>");
  if (steps.empty()) return "fgemm::sm90::Identity";
  std::string chain = steps.back();
  for (auto step = steps.rbegin() + 1; step != steps.rend(); ++step)
    chain = "fgemm::sm90::Chain<" + *step + ", " + chain + ">";
  return chain;
}

std::string operand_includes(const KernelShape& shape) {
  std::string includes;
  if (!shape.a_mn_major || !shape.b_mn_major) includes += "#include \"fgemm/sm90/operand_k_major.cuh\"\n";
  if (shape.a_mn_major || shape.b_mn_major) includes += "#include \"fgemm/sm90/operand_mn_major.cuh\"\n";
  return includes;
}

// The per-K-block math of the kind, and its header: the block recipe (with sfa loaded by the TMA or by the helper
// warp); INT8's INT32 sums as values (scaled in the epilogue) or as the bits of D int32; or the 16-bit kinds'
// plain sums.
struct MathPolicy {
  std::string type;
  const char* header;
};

MathPolicy math_policy(const KernelConfig& config) {
  const KernelShape& shape = config.shape;
  if (shape.scaling == detail::Scaling::RowBlocks)
    return {std::string("fgemm::sm90::RowBlocksMath<Config, fgemm::sm90::Wgmma, ") + cpp_bool(shape.sfa_by_tma) + ">",
            "math_row_blocks.cuh"};
  if (config.block_scaled())
    return {std::string("fgemm::sm90::BlockScaledMath<Config, fgemm::sm90::Wgmma, ") + cpp_bool(shape.sfa_by_tma) +
                ">",
            "math_block_scaled.cuh"};
  if (shape.ab_dtype == DType::I8)
    return {std::string("fgemm::sm90::Int32SumsMath<Config, fgemm::sm90::Wgmma, ") +
                cpp_bool(shape.scaling == detail::Scaling::None) + ">",
            "math_int32_sums.cuh"};
  return {"fgemm::sm90::NoScaleMath<Config, fgemm::sm90::Wgmma>", "math_no_scale.cuh"};
}

}  // namespace

std::string gemm_kernel_source(const KernelConfig& config) {
  const MathPolicy math = math_policy(config);
  const bool row_blocks = config.shape.scaling == detail::Scaling::RowBlocks;
  const bool expert_maps = config.expert_maps();
  const bool scales_epilogue = config.shape.scaling == detail::Scaling::RowColumn || config.shape.has_bias;
  std::ostringstream out;
  out << "// " << config.name() << "\n"
      << "#include \"fgemm/sm90/epilogue_transform.cuh\"\n"
      << (scales_epilogue ? "#include \"fgemm/sm90/epilogue_scales.cuh\"\n" : "")
      << "#include \"fgemm/sm90/gemm_kernel.cuh\"\n"
      << "#include \"fgemm/sm90/" << math.header << "\"\n"
      << operand_includes(config.shape) << "\n"
      << mma_struct_source(mma_type(config.shape), config.mma_n(), config.shape.a_mn_major, config.shape.b_mn_major)
      << "\n"
      << "struct Tile {\n"
      << "  static constexpr fgemm::sm90::TileConfig value{" << config.block_m << ", " << config.block_n << ", "
      << config.num_stages << ", " << config.cluster_m << ", " << config.cluster_n << ", " << config.output_bytes
      << ", " << config.operand_bytes << ", " << cpp_bool(config.output_f16) << ", " << config.split_k << ", "
      << config.c_slots << ", " << config.c_bytes << ", " << config.a_rows << ", "
      << cpp_bool(config.alternate_k_blocks) << ", " << cpp_bool(config.staged_in_halves) << "};\n"
      << "};\n"
      << "using Config = fgemm::sm90::GemmConfig<Tile, " << config.shape.n << ", " << config.shape.k
      << ", fgemm::sm90::Layout::" << layout_enumerator(config) << ", " << config.band_m << ", "
      << cpp_bool(config.shape.c_in_d) << ", " << cpp_bool(config.shape.packed_d) << ">;\n"
      << "using Kernel = fgemm::sm90::GemmKernel<Config, " << operand_policy(config.shape.a_mn_major, 'a') << ",\n"
      << "    " << operand_policy(config.shape.b_mn_major, 'b') << ",\n"
      << "    " << math.type << ",\n"
      << "    " << transform_policy(config) << ">;\n"
      << "static_assert(Kernel::kSmemBytes == " << config.smem_bytes()
      << ", \"the host's shared-memory size agrees with the kernel's\");\n\n"
      << "extern \"C\" __global__ void __launch_bounds__(Config::kNumThreads, 1)\n"
      << kGemmKernelSymbol << "(const fgemm::sm90::GemmParams params,\n"
      << "    const __grid_constant__ fgemm::ptx::TensorMap tmap_a,\n"
      << "    const __grid_constant__ fgemm::ptx::TensorMap tmap_b,\n"
      << "    const __grid_constant__ fgemm::ptx::TensorMap tmap_sfa,\n"
      << "    const __grid_constant__ fgemm::ptx::TensorMap tmap_sfb,\n"
      << "    const __grid_constant__ fgemm::ptx::TensorMap tmap_d,\n"
      << "    const __grid_constant__ fgemm::ptx::TensorMap tmap_c"
      << (expert_maps ? ",\n    const __grid_constant__ fgemm::sm90::ExpertTensorMaps expert_maps" : "") << ") {\n"
      << "  Kernel::run(params, &tmap_a, &tmap_b, {&tmap_sfa, " << (row_blocks ? "&tmap_sfb" : "nullptr")
      << "}, &tmap_d, &tmap_c, " << (expert_maps ? "&expert_maps" : "nullptr") << ");\n"
      << "}\n";
  return out.str();
}

}  // namespace fgemm::cuda
