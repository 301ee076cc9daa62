// Compiling ahead the GPU kernels a model's GEMMs will need, so that no call waits on the JIT compiler.
//
// A kernel depends on M only through the configuration the heuristics choose for it, so a warm-up enumerates
// the configurations of every M in a range (no GEMM runs) and compiles each once, in parallel, into the disk
// cache (FGEMM_CACHE_DIR) and, where a device is given, loads it there. Without a device (a build machine with
// no GPU) the kernels are chosen for an H100 (132 SMs, or set_num_sms's count) and only cached.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fgemm/tensor.hpp"

namespace fgemm {

enum class GemmOperation : std::uint8_t {
  Fp8GemmNt,                    // fp8_gemm_nt
  MGroupedFp8GemmNtContiguous,  // m_grouped_fp8_gemm_nt_contiguous
  MGroupedFp8GemmNtMasked,      // m_grouped_fp8_gemm_nt_masked
};

// One GEMM of a model, M left open: what its kernels are specialised for.
struct WarmupShape {
  GemmOperation operation = GemmOperation::Fp8GemmNt;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t num_groups = 1;  // the masked layout's groups (the configuration depends on them)
  DType d_dtype = DType::BF16;  // BF16 or F32
  bool with_c = false;          // fp8_gemm_nt with C
  // sfa passed MN-major and TMA-aligned (the fast layout), or any other layout (the scale loader's kernels).
  bool sfa_mn_major = true;
};

struct WarmedKernel {
  std::string name;
  bool compiled = false;  // compiled now; false: found in the disk cache or already loaded
  double seconds = 0;     // compiling (or reading) and loading it
};

// Compiles every kernel the heuristics choose for the shapes with M (the masked layout: expected_m) in
// [m_min, m_max], on `threads` threads (0: one per core), and loads them on CUDA device `device` unless it is
// nullopt. `on_kernel` (optional) is called after each kernel, from the compiling threads one at a time, with
// the kernel, the number done and the total. Throws fgemm::Error: InvalidValue for a shape or range that no
// GEMM could take, Unsupported for a device that is not sm_90, Runtime when a compilation fails.
std::vector<WarmedKernel> warmup(
    const std::vector<WarmupShape>& shapes, std::int64_t m_min, std::int64_t m_max, std::optional<int> device,
    int threads = 0,
    const std::function<void(const WarmedKernel&, std::size_t done, std::size_t total)>& on_kernel = {});

}  // namespace fgemm
