// Generates the CUDA C++ source of one sm90 GEMM kernel: the configuration as template arguments of the
// kernel skeleton in kernels/fgemm/sm90/gemm_kernel.cuh with its policies, and the wgmma instruction for
// its N.
#pragma once

#include <string>

#include "cuda/kernel_config.hpp"

namespace fgemm::cuda {

// The kernel's extern "C" symbol.
constexpr const char* kGemmKernelSymbol = "fgemm_sm90_fp8_gemm";

std::string gemm_kernel_source(const KernelConfig& config);

}  // namespace fgemm::cuda
