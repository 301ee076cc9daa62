// NVRTC compiles, for sm_90a and without a GPU, the quantization kernels (FP8, INT8 and the cast-transpose) for a
// sample of specialisations, and ptxas reports no spills and no local memory.
#include <gtest/gtest.h>

#include "cuda/cast_transpose.hpp"
#include "cuda/quantize.hpp"
#include "cuda/quantize_int8.hpp"
#include "fgemm/quantize_params.cuh"
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

// Both input types, both scales, every combination of the access widths of x and of the transposed codes, and
// the weights' one scale per 128 x 128 block.
TEST(QuantizeKernelCompile, CastTransposeSampleOfSpecialisations) {
  const CastTransposeKernel kernels[] = {
      {DType::BF16, 7168, false, true, true},       {DType::BF16, 2048, true, true, true},
      {DType::F32, 7168, false, true, true},        {DType::F32, 2048, true, true, false},
      {DType::BF16, 130, false, false, true},       {DType::F32, 100, true, false, false},
      {DType::BF16, 1, false, false, false},        {DType::BF16, 16, true, true, false},
      {DType::BF16, 7168, false, true, true, true}, {DType::F32, 130, true, false, false, true},
  };
  for (const CastTransposeKernel& kernel : kernels)
    expect_compiles_without_spills(cast_transpose_kernel_spec(kernel), kernel.name());
}

TEST(QuantizeKernelCompile, CastTransposeNamesTellTheSpecialisationsApart) {
  const CastTransposeKernel base{DType::BF16, 7168, false, true, true};
  CastTransposeKernel other[] = {base, base, base, base, base, base};
  other[0].input = DType::F32;
  other[1].cols = 7040;
  other[2].use_ue8m0 = true;
  other[3].vectorized = false;
  other[4].transposed_vectorized = false;
  other[5].block_scaled = true;
  for (const CastTransposeKernel& kernel : other) EXPECT_NE(kernel.name(), base.name()) << kernel.name();
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

// Every scaling and input type, both access widths, and for a whole row the team sizes from one thread to a
// CTA, the longest row held in registers and a longer one, read twice.
TEST(QuantizeKernelCompile, Int8SampleOfSpecialisations) {
  using detail::Int8Scaling;
  const Int8QuantizeKernel kernels[] = {
      {Int8Scaling::Row, DType::BF16, 7168, 128, true},
      {Int8Scaling::Row, DType::F16, 16, 128, true},
      {Int8Scaling::Row, DType::F32, 130, 128, false},
      {Int8Scaling::Row, DType::F32, 0, 128, true},
      {Int8Scaling::Row, DType::BF16, quant::kRowHeldCols, 128, true},
      {Int8Scaling::Row, DType::F32, quant::kRowHeldCols, 128, true},
      {Int8Scaling::Row, DType::F16, quant::kRowHeldCols - 8, 128, false},
      {Int8Scaling::Row, DType::BF16, quant::kRowHeldCols + 16, 128, true},
      {Int8Scaling::Group, DType::BF16, 7168, 128, true},
      {Int8Scaling::Group, DType::F16, 2048, 64, true},
      {Int8Scaling::Group, DType::F32, 1000, 32, false},
      {Int8Scaling::Block, DType::BF16, 7168, 128, true},
      {Int8Scaling::Block, DType::F16, 300, 128, false},
      {Int8Scaling::Block, DType::F32, 2048, 128, true},
  };
  for (const Int8QuantizeKernel& kernel : kernels)
    expect_compiles_without_spills(quantize_int8_kernel_spec(kernel), kernel.name());
}

TEST(QuantizeKernelCompile, Int8NamesTellTheSpecialisationsApart) {
  using detail::Int8Scaling;
  const Int8QuantizeKernel base{Int8Scaling::Group, DType::BF16, 7168, 128, true};
  Int8QuantizeKernel other[] = {base, base, base, base, base, base, base};
  other[0].scaling = Int8Scaling::Row;
  other[1].scaling = Int8Scaling::Block;
  other[2].input = DType::F16;
  other[3].input = DType::F32;
  other[4].cols = 7040;
  other[5].group_cols = 64;
  other[6].vectorized = false;
  for (const Int8QuantizeKernel& kernel : other) EXPECT_NE(kernel.name(), base.name()) << kernel.name();
  const QuantizeKernel fp8{detail::ScaleBlock::Token, DType::BF16, 7168, false, true};
  EXPECT_NE(base.name(), fp8.name());
}

}  // namespace
}  // namespace fgemm::cuda
