#include "cuda/kernel_source.hpp"

#include <sstream>

namespace fgemm::cuda {
namespace {

// wgmma names its accumulator registers one by one, so each N needs its own asm statement.
std::string wgmma_struct(int n) {
  const int regs = n / 2;
  std::ostringstream operands, constraints;
  for (int i = 0; i < regs; ++i) {
    operands << (i ? ", " : "") << "%" << i;
    constraints << (i ? ", " : "") << "\"+f\"(d[" << i << "])";
  }
  std::ostringstream out;
  out << "namespace fgemm::sm90 {\n"
      << "struct Wgmma {\n"
      << "  static constexpr uint32_t N = " << n << ";\n"
      << "  __device__ __forceinline__ static void mma(float (&d)[" << regs
      << "], uint64_t desc_a, uint64_t desc_b, bool accumulate) {\n"
      << "    asm volatile(\n"
      << "        \"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" << regs + 2 << ", 0;\\n\"\n"
      << "        \"wgmma.mma_async.sync.aligned.m64n" << n << "k32.f32.e4m3.e4m3 {" << operands.str() << "}, %"
      << regs << ", %" << regs + 1 << ", p, 1, 1;\\n}\\n\"\n"
      << "        : " << constraints.str() << "\n"
      << "        : \"l\"(desc_a), \"l\"(desc_b), \"r\"(static_cast<uint32_t>(accumulate)));\n"
      << "  }\n"
      << "};\n"
      << "}  // namespace fgemm::sm90\n";
  return out.str();
}

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
      << "#include \"fgemm/sm90_fp8_gemm.cuh\"\n\n"
      << wgmma_struct(config.mma_n()) << "\n"
      << "using Config = fgemm::sm90::GemmConfig<" << config.block_m << ", " << config.block_n << ", "
      << config.num_stages << ", " << config.shape.n << ", " << config.shape.k << ", "
      << cpp_bool(config.shape.output_f32) << ", " << cpp_bool(config.shape.has_c) << ", "
      << config.swizzle_d_bytes() << ", " << config.band_m << ", fgemm::sm90::Layout::" << layout_enumerator(config)
      << ", " << config.cluster_m << ", " << config.cluster_n << ", " << cpp_bool(config.shape.sfa_by_tma) << ">;\n"
      << "static_assert(Config::kSmemBytes == " << config.smem_bytes()
      << ", \"the host's shared-memory size agrees with the kernel's\");\n"
      << "static_assert(Config::kTwoPartials == " << cpp_bool(config.two_partials())
      << ", \"the cost model and the kernel agree on the partial accumulators\");\n\n"
      << "extern \"C\" __global__ void __launch_bounds__(Config::kNumThreads, 1)\n"
      << kGemmKernelSymbol << "(const fgemm::sm90::GemmParams params,\n"
      << "    const __grid_constant__ fgemm::ptx::TensorMap tmap_a,\n"
      << "    const __grid_constant__ fgemm::ptx::TensorMap tmap_b,\n"
      << "    const __grid_constant__ fgemm::ptx::TensorMap tmap_sfa,\n"
      << "    const __grid_constant__ fgemm::ptx::TensorMap tmap_d) {\n"
      << "  fgemm::sm90::fp8_gemm<Config, fgemm::sm90::Wgmma>(params, &tmap_a, &tmap_b, &tmap_sfa, &tmap_d);\n"
      << "}\n";
  return out.str();
}

}  // namespace fgemm::cuda
