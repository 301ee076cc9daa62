#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "fgemm/error.hpp"
#include "jit/compiler.hpp"
#include "jit/process.hpp"
#include "test_jit_support.hpp"

namespace fgemm::jit {
namespace {

using test::contains;
using test::ScopedEnvironment;
using test::sm90a_kernel;
using test::thrown_error;

bool is_elf(const std::vector<char>& bytes) {
  return bytes.size() > 4 && std::memcmp(bytes.data(),
                                         "\x7f"
                                         "ELF",
                                         4) == 0;
}

Error compile_error(const KernelSpec& spec, const Toolchain& toolchain) {
  return thrown_error([&] { compile(spec, toolchain); });
}

TEST(JitCompile, NvrtcCompilesAnSm90aKernelWithoutSpills) {
  const CompileResult result = compile(sm90a_kernel(), Compiler::Nvrtc);
  EXPECT_TRUE(is_elf(result.cubin));
  EXPECT_TRUE(contains(result.log, "sm_90a")) << result.log;
  EXPECT_GT(result.ptxas.registers, 0);
  EXPECT_EQ(result.ptxas.spill_store_bytes, 0);
  EXPECT_EQ(result.ptxas.spill_load_bytes, 0);
  EXPECT_EQ(result.ptxas.stack_frame_bytes, 0);
}

TEST(JitCompile, TheTestKernelReallyNeedsSm90a) {
  Toolchain plain_sm90 = find_toolchain(Compiler::Nvrtc);
  std::replace(plain_sm90.flags.begin(), plain_sm90.flags.end(), std::string("-arch=sm_90a"),
               std::string("-arch=sm_90"));
  const Error error = compile_error(sm90a_kernel(), plain_sm90);
  EXPECT_EQ(error.kind(), ErrorKind::Runtime);
  EXPECT_TRUE(contains(error.what(), "wgmma")) << error.what();
}

TEST(JitCompile, LineInfoIsAFlagOfTheToolchainThatTheCompilerTakes) {
  const ScopedEnvironment line_info("FGEMM_JIT_LINE_INFO", "1");
  const Toolchain toolchain = find_toolchain(Compiler::Nvrtc);
  EXPECT_NE(std::find(toolchain.flags.begin(), toolchain.flags.end(), "-lineinfo"), toolchain.flags.end());
  const CompileResult result = compile(sm90a_kernel(), toolchain);
  EXPECT_TRUE(is_elf(result.cubin));
  const ScopedEnvironment no_line_info("FGEMM_JIT_LINE_INFO", "0");
  const Toolchain plain = find_toolchain(Compiler::Nvrtc);
  EXPECT_EQ(std::find(plain.flags.begin(), plain.flags.end(), "-lineinfo"), plain.flags.end());
}

TEST(JitCompile, ASyntaxErrorThrowsTheCompilerLog) {
  const KernelSpec broken{"fgemm_test_broken",
                          "extern \"C\" __global__ void fgemm_test_broken() { undeclared_name = 1; }", 0};
  for (Compiler compiler : {Compiler::Nvrtc, Compiler::Nvcc}) {
    if (compiler == Compiler::Nvcc && find_cuda_tool("nvcc").empty()) continue;
    const Error error = compile_error(broken, find_toolchain(compiler));
    EXPECT_EQ(error.kind(), ErrorKind::Runtime);
    EXPECT_TRUE(contains(error.what(), "'fgemm_test_broken'")) << error.what();
    EXPECT_TRUE(contains(error.what(), "undeclared_name")) << error.what();
    EXPECT_TRUE(contains(error.what(), to_string(compiler))) << error.what();
  }
}

TEST(JitCompile, ANameTheSourceDoesNotDefineIsAnError) {
  KernelSpec spec = sm90a_kernel();
  spec.name = "fgemm_test_other_name";
  const Error error = compile_error(spec, find_toolchain(Compiler::Nvrtc));
  EXPECT_TRUE(contains(error.what(), "'fgemm_test_other_name'")) << error.what();
}

TEST(JitCompile, AnInvalidSpecIsRefusedBeforeCompiling) {
  KernelSpec spec = sm90a_kernel();
  spec.name = "two words";
  EXPECT_EQ(compile_error(spec, find_toolchain(Compiler::Nvrtc)).kind(), ErrorKind::InvalidValue);
  spec = sm90a_kernel();
  spec.dynamic_smem_bytes = -1;
  EXPECT_EQ(compile_error(spec, find_toolchain(Compiler::Nvrtc)).kind(), ErrorKind::InvalidValue);
}

TEST(JitCompile, NvccCompilesTheSameKernel) {
  if (std::getenv("FGEMM_NVCC") == nullptr && find_cuda_tool("nvcc").empty())
    GTEST_SKIP()
        << "nvcc is not installed (neither FGEMM_NVCC, $CUDA_HOME/bin, PATH nor /usr/local/cuda/bin)";
  const Toolchain nvcc = find_toolchain(Compiler::Nvcc);
  EXPECT_TRUE(contains(nvcc.version, "Cuda compilation tools")) << nvcc.version;
  const CompileResult result = compile(sm90a_kernel(), nvcc);
  EXPECT_TRUE(is_elf(result.cubin));
  EXPECT_GT(result.ptxas.registers, 0);
  EXPECT_EQ(result.ptxas.spill_store_bytes, 0);
  EXPECT_EQ(result.ptxas.spill_load_bytes, 0);
}

TEST(JitCompile, AMissingNvccIsReportedClearly) {
  const ScopedEnvironment nvcc("FGEMM_NVCC", "/nonexistent/nvcc");
  const Error error = thrown_error([] { find_toolchain(Compiler::Nvcc); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidValue);
  EXPECT_TRUE(contains(error.what(), "FGEMM_NVCC")) << error.what();
}

TEST(JitCompile, TheCompilerIsChosenByFgemmJitCompiler) {
  {
    const ScopedEnvironment unset("FGEMM_JIT_COMPILER", nullptr);
    EXPECT_EQ(compiler_from_environment(), Compiler::Nvrtc);
  }
  {
    const ScopedEnvironment nvcc("FGEMM_JIT_COMPILER", "nvcc");
    EXPECT_EQ(compiler_from_environment(), Compiler::Nvcc);
  }
  const ScopedEnvironment wrong("FGEMM_JIT_COMPILER", "clang");
  const Error error = thrown_error([] { compiler_from_environment(); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidValue);
  EXPECT_TRUE(contains(error.what(), "\"clang\"")) << error.what();
}

TEST(JitCompile, DiagnosticsGoToStderrWhenAskedFor) {
  const ScopedEnvironment ptxas("FGEMM_PTXAS_VERBOSE", "1");
  const ScopedEnvironment sass("FGEMM_DUMP_SASS", "1");
  const ScopedEnvironment debug("FGEMM_JIT_DEBUG", "1");
  testing::internal::CaptureStderr();
  compile(sm90a_kernel(), Compiler::Nvrtc);
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(printed, "fgemm_test_sm90a: ")) << printed;
  EXPECT_TRUE(contains(printed, " registers, 0 bytes spill stores")) << printed;
  EXPECT_TRUE(contains(printed, "-arch=sm_90a")) << printed;  // the compiler command
  if (find_cuda_tool("cuobjdump").empty())
    EXPECT_TRUE(contains(printed, "cuobjdump was not found")) << printed;
  else
    EXPECT_TRUE(contains(printed, "Function : fgemm_test_sm90a")) << printed;
}

}  // namespace
}  // namespace fgemm::jit
