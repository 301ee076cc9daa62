#include <gtest/gtest.h>

#include <string>

#include "fgemm/error.hpp"
#include "jit/ptxas_stats.hpp"
#include "test_jit_support.hpp"

namespace fgemm::jit {
namespace {

// ptxas -v output as NVRTC 13 writes it, with a called function's properties ahead of the kernel's.
const std::string kNvrtcLog = R"(ptxas info    : 0 bytes gmem
ptxas info    : Function properties for helper
ptxas         .     24 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
ptxas info    : Compiling entry function 'gemm_kernel' for 'sm_90a'
ptxas info    : Function properties for helper
ptxas         .     24 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
ptxas info    : Function properties for gemm_kernel
ptxas         .     16 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 168 registers, used 1 barriers, 16 bytes cumulative stack size, 1024 bytes smem
ptxas info    : Compile time = 59.287 ms
ptxas info    : Compiling entry function 'other_kernel' for 'sm_90a'
ptxas info    : Function properties for other_kernel
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, used 0 barriers
)";

// ptxas -v output as nvcc 13 writes it: the properties line has no "ptxas ." prefix.
const std::string kNvccLog = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'gemm_kernel' for 'sm_90a'
ptxas info    : Function properties for gemm_kernel
    800 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 800 bytes cumulative stack size, 1024 bytes smem
ptxas info    : Compile time = 228.260 ms
)";

TEST(PtxasStats, ReadsTheNamedKernelOfAnNvrtcLog) {
  const PtxasStats gemm = parse_ptxas_stats(kNvrtcLog, "gemm_kernel");
  EXPECT_EQ(gemm.registers, 168);
  EXPECT_EQ(gemm.stack_frame_bytes, 16);
  EXPECT_EQ(gemm.spill_store_bytes, 4);
  EXPECT_EQ(gemm.spill_load_bytes, 12);
  EXPECT_EQ(gemm.shared_memory_bytes, 1024);

  const PtxasStats other = parse_ptxas_stats(kNvrtcLog, "other_kernel");
  EXPECT_EQ(other.registers, 40);
  EXPECT_EQ(other.spill_store_bytes, 0);
  EXPECT_EQ(other.shared_memory_bytes, 0);
}

TEST(PtxasStats, ReadsAnNvccLog) {
  const PtxasStats stats = parse_ptxas_stats(kNvccLog, "gemm_kernel");
  EXPECT_EQ(stats.registers, 255);
  EXPECT_EQ(stats.stack_frame_bytes, 800);
  EXPECT_EQ(stats.spill_store_bytes, 0);
  EXPECT_EQ(stats.shared_memory_bytes, 1024);
}

TEST(PtxasStats, AKernelTheLogDoesNotReportIsAnError) {
  // A prefix of a reported name is not that name.
  const Error error = test::thrown_error([] { parse_ptxas_stats(kNvrtcLog, "gemm"); });
  EXPECT_EQ(error.kind(), ErrorKind::Runtime);
  EXPECT_TRUE(test::contains(error.what(), "'gemm'")) << error.what();
  EXPECT_EQ(test::thrown_error([] { parse_ptxas_stats("", "gemm_kernel"); }).kind(), ErrorKind::Runtime);
}

TEST(PtxasStats, PrintsEveryField) {
  EXPECT_EQ(to_string(PtxasStats{168, 4, 12, 16, 1024}),
            "168 registers, 4 bytes spill stores, 12 bytes spill loads, 16 bytes stack frame, "
            "1024 bytes shared memory");
}

}  // namespace
}  // namespace fgemm::jit
