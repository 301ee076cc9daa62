// NVRTC compiles, for sm_90a and without a GPU, the quantization kernels for a sample of specialisations,
// and ptxas reports no spills and no local memory.
#include <gtest/gtest.h>

#include "cuda/quantize.hpp"
#include "jit/compiler.hpp"

namespace fgemm::cuda {
namespace {

void expect_compiles_without_spills(const jit::KernelSpec& spec, const std::string& what) {
  const jit::CompileResult result = jit::compile(spec, jit::Compiler::Nvrtc);
  EXPECT_FALSE(result.cubin.empty()) << what;
  EXPECT_GT(result.ptxas.registers, 0) << what;
  EXPECT_EQ(result.ptxas.spill_store_bytes, 0) << what << "\n" << result.log;
  EXPECT_EQ(result.ptxas.spill_load_bytes, 0) << what << "\n" << result.log;
  EXPECT_EQ(result.ptxas.stack_frame_bytes, 0) << what << "\n" << result.log;
}

TEST(QuantizeKernelCompile, SampleOfSpecialisations) {
  using detail::ScaleBlock;
  const QuantizeKernel kernels[] = {
      {ScaleBlock::Token, DType::BF16, 7168, false, true}, {ScaleBlock::Token, DType::F32, 2048, true, true},
      {ScaleBlock::Token, DType::BF16, 130, false, false}, {ScaleBlock::Token, DType::F32, 7000, true, true},
      {ScaleBlock::Block, DType::BF16, 7168, false, true}, {ScaleBlock::Block, DType::F32, 2048, true, true},
      {ScaleBlock::Block, DType::F32, 300, false, false},  {ScaleBlock::Block, DType::BF16, 16, true, true},
  };
  for (const QuantizeKernel& kernel : kernels)
    expect_compiles_without_spills(quantize_kernel_spec(kernel), kernel.name());
}

TEST(QuantizeKernelCompile, CopyScales) { expect_compiles_without_spills(copy_scales_kernel_spec(), "copy_scales"); }

TEST(QuantizeKernelCompile, NamesTellTheSpecialisationsApart) {
  using detail::ScaleBlock;
  const QuantizeKernel base{ScaleBlock::Token, DType::BF16, 7168, false, true};
  QuantizeKernel other[] = {base, base, base, base, base};
  other[0].block = ScaleBlock::Block;
  other[1].input = DType::F32;
  other[2].cols = 7040;
  other[3].use_ue8m0 = true;
  other[4].vectorized = false;
  for (const QuantizeKernel& kernel : other) EXPECT_NE(kernel.name(), base.name());
}

}  // namespace
}  // namespace fgemm::cuda
