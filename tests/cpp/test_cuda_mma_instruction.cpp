// The wgmma table: every input type's instruction assembles for sm_90a at the N the kernels use, the list of
// valid N follows the PTX ISA, and what the instruction cannot do is refused by name.
#include <gtest/gtest.h>

#include <string>

#include "cuda/mma_instruction.hpp"
#include "jit/compiler.hpp"
#include "test_jit_support.hpp"

namespace fgemm::cuda {
namespace {

// A kernel that issues the generated wgmma once on descriptors it is given, so that ptxas assembles it.
jit::KernelSpec mma_kernel(MmaType type, int n, bool transpose_b, const char* accumulator_type) {
  const std::string source = "#include \"fgemm/common.cuh\"\nusing fgemm::uint32_t;\nusing fgemm::uint64_t;\n"
                             "using fgemm::int32_t;\n" +
                             mma_struct_source(type, n, false, transpose_b) +
                             "extern \"C\" __global__ void __launch_bounds__(128, 1) fgemm_test_mma(uint64_t a, uint64_t b, " +
                             accumulator_type + "* out) {\n  " + accumulator_type + " d[" + std::to_string(n / 2) +
                             "] = {};\n  fgemm::sm90::Wgmma::mma(d, a, b, true);\n"
                             "  asm volatile(\"wgmma.commit_group.sync.aligned;\\nwgmma.wait_group.sync.aligned 0;\\n\" ::: \"memory\");\n"
                             "  for (int i = 0; i < " +
                             std::to_string(n / 2) + "; ++i) out[threadIdx.x * " + std::to_string(n / 2) +
                             " + i] = d[i];\n}\n";
  return {"fgemm_test_mma", source, 0};
}

TEST(MmaInstruction, EveryTypeAssembles) {
  const struct {
    MmaType type;
    int n;
    bool transpose_b;
    const char* accumulator;
    const char* ptx;
  } cases[] = {
      {MmaType::E4m3F32, 128, false, "float", "m64n128k32.f32.e4m3.e4m3"},
      {MmaType::Bf16F32, 96, true, "float", "m64n96k16.f32.bf16.bf16"},
      {MmaType::F16F32, 64, false, "float", "m64n64k16.f32.f16.f16"},
      {MmaType::S8S32, 48, false, "int32_t", "m64n48k32.s32.s8.s8"},
  };
  for (const auto& c : cases) {
    const jit::KernelSpec spec = mma_kernel(c.type, c.n, c.transpose_b, c.accumulator);
    EXPECT_NE(spec.source.find(c.ptx), std::string::npos) << spec.source;
    const jit::CompileResult result = jit::compile(spec, jit::Compiler::Nvrtc);
    EXPECT_FALSE(result.cubin.empty()) << c.ptx << "\n" << result.log;
  }
}

TEST(MmaInstruction, ValidNFollowsTheIsa) {
  EXPECT_TRUE(mma_n_is_valid(MmaType::E4m3F32, 8));
  EXPECT_TRUE(mma_n_is_valid(MmaType::E4m3F32, 24));
  EXPECT_TRUE(mma_n_is_valid(MmaType::Bf16F32, 256));
  EXPECT_FALSE(mma_n_is_valid(MmaType::Bf16F32, 264));
  EXPECT_FALSE(mma_n_is_valid(MmaType::F16F32, 12));
  EXPECT_TRUE(mma_n_is_valid(MmaType::S8S32, 24));
  EXPECT_FALSE(mma_n_is_valid(MmaType::S8S32, 40));  // past 24, INT8 takes multiples of 16 only
  EXPECT_TRUE(mma_n_is_valid(MmaType::S8S32, 48));
}

TEST(MmaInstruction, RefusesWhatTheInstructionCannotDo) {
  const Error bad_n = test::thrown_error([] { mma_struct_source(MmaType::S8S32, 40); });
  EXPECT_EQ(bad_n.kind(), ErrorKind::InvalidValue);
  EXPECT_TRUE(test::contains(bad_n.what(), "s32.s8.s8 has no N = 40")) << bad_n.what();
  const Error transposed = test::thrown_error([] { mma_struct_source(MmaType::E4m3F32, 64, true, false); });
  EXPECT_EQ(transposed.kind(), ErrorKind::InvalidValue);
  EXPECT_TRUE(test::contains(transposed.what(), "K-major operands only")) << transposed.what();
}

}  // namespace
}  // namespace fgemm::cuda
