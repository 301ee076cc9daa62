// The host side of the few-row kernel (kernels/fgemm/sm90/few_rows_kernel.cuh): the problems it runs instead of
// the skeleton's tiles, its configuration, its source, and its launch.
#pragma once

#include <optional>
#include <string>

#include "core/problem.hpp"
#include "cuda/heuristics.hpp"
#include "fgemm/fgemm.hpp"
#include "jit/kernel_spec.hpp"

namespace fgemm::cuda {

struct FewRowsConfig {
  bool f16_inputs = false;
  DType d_dtype = DType::BF16;  // BF16, F16 or F32
  bool has_c = false;           // C of its own or D itself,
  bool c_of_d_type = false;     // of D's 16-bit type rather than FP32
  int warps = 8;                // per CTA
  int unroll = 2;               // 16-byte loads of B each lane has in flight
  int splits = 1;               // CTAs of a cluster, each a range of K
  std::int64_t k_per_split = 0;

  // A unique, readable name: the key of the kernel caches.
  std::string name() const;
};

// The configuration of a problem (as the heuristics see it) where the few-row kernel runs it, or nullopt where the
// skeleton's tiles do: see the conditions in few_rows.cpp. `num_sms`: the device's multiprocessors; `forced`: what
// force_config imposes on the skeleton's kernels (anything leaves the problem to them).
std::optional<FewRowsConfig> few_rows_config(const ProblemSize& size, int num_sms, const BlockShape& forced);

jit::KernelSpec few_rows_kernel_spec(const FewRowsConfig& config);

// Runs p (for which few_rows_config gave `config`) on `stream`, on p's device, made current.
void few_rows_gemm(const detail::GemmProblem& p, const FewRowsConfig& config, Stream stream);

}  // namespace fgemm::cuda
