// The GPU backend refuses, before it touches a device, problems its kernels cannot address: TMA coordinates
// are 32-bit signed, and the math threads address sfb by 32-bit element offsets.
#include <gtest/gtest.h>

#include <string>

#include "cuda/gemm_sm90.hpp"
#include "fgemm/error.hpp"

namespace fgemm::cuda {
namespace {

detail::GemmProblem grouped_problem() {
  detail::GemmProblem problem;
  problem.layout = detail::GemmLayout::Contiguous;
  problem.m = 256;
  problem.n = 512;
  problem.k = 1024;
  problem.num_groups = 8;
  problem.sfb_n_stride = 8;  // [G, N/128, K/128] contiguous
  problem.sfb_k_stride = 1;
  problem.sfb_group_stride = 32;
  return problem;
}

void expect_refused(const detail::GemmProblem& problem, const std::string& argument) {
  try {
    gemm(problem, Stream{});
    FAIL() << "expected fgemm::Error naming " << argument;
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidValue);
    EXPECT_NE(std::string(error.what()).find(argument), std::string::npos) << error.what();
  }
}

TEST(GpuBackendLimits, RefusesExtentsBeyondTmaCoordinates) {
  detail::GemmProblem problem = grouped_problem();
  problem.k = std::int64_t(1) << 31;
  expect_refused(problem, "below 2^31");
}

TEST(GpuBackendLimits, RefusesAnSfbSpanningTwoToThe32Elements) {
  detail::GemmProblem problem = grouped_problem();
  problem.sfb_group_stride = (std::int64_t(1) << 32) / 7 + 1;  // expert 7's scales start past 2^32 elements
  expect_refused(problem, "'sfb'");
}

}  // namespace
}  // namespace fgemm::cuda
