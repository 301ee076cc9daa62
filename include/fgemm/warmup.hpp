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

// The GEMM functions whose kernels a warm-up compiles, by their names.
enum class GemmOperation : std::uint8_t {
  Fp8GemmNt,                     // fp8_gemm_nt
  MGroupedFp8GemmNtContiguous,   // m_grouped_fp8_gemm_nt_contiguous
  MGroupedFp8GemmNtMasked,       // m_grouped_fp8_gemm_nt_masked
  Bf16GemmNt,                    // bf16_gemm_nt
  Bf16GemmNn,                    // bf16_gemm_nn
  Bf16GemmTn,                    // bf16_gemm_tn
  Bf16GemmTt,                    // bf16_gemm_tt
  MGroupedBf16GemmNtContiguous,  // m_grouped_bf16_gemm_nt_contiguous
  MGroupedBf16GemmNnContiguous,  // m_grouped_bf16_gemm_nn_contiguous
  MGroupedBf16GemmNtMasked,      // m_grouped_bf16_gemm_nt_masked
  Fp16GemmNt,                    // fp16_gemm_nt
  Fp16GemmNn,                    // fp16_gemm_nn
  Fp16GemmTn,                    // fp16_gemm_tn
  Fp16GemmTt,                    // fp16_gemm_tt
  MGroupedFp16GemmNtContiguous,  // m_grouped_fp16_gemm_nt_contiguous
  MGroupedFp16GemmNnContiguous,  // m_grouped_fp16_gemm_nn_contiguous
  MGroupedFp16GemmNtMasked,      // m_grouped_fp16_gemm_nt_masked
};

// One GEMM of a model, M left open: what its kernels are specialised for.
struct WarmupShape {
  GemmOperation operation = GemmOperation::Fp8GemmNt;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t num_groups = 1;  // the masked layout's groups (the configuration depends on them)
  // D: BF16 or F32 for FP8 and BF16 inputs, F16 or F32 for FP16 inputs.
  DType d_dtype = DType::BF16;
  // The normal layout with C: fp8_gemm_nt's FP32 C; the 16-bit GEMMs' C of D's type, or D itself where D is 16-bit.
  // (An FP32 D accumulated in place is not warmed up: its kernels depend on M in more ways.)
  bool with_c = false;
  // sfa passed MN-major and TMA-aligned (the fast layout), or any other layout (the scale loader's kernels). FP8 only.
  bool sfa_mn_major = true;
  // The m-grouped contiguous GEMMs: the experts' rows named by prefix sums (use_psum_layout) rather than m_indices,
  // and with them D packed (d_row_starts given).
  bool use_psum_layout = false;
  bool packed_d = false;
};

struct WarmedKernel {
  std::string name;
  bool compiled = false;  // compiled now; false: found in the disk cache or already loaded
  double seconds = 0;     // compiling (or reading) and loading it
};

// Compiles every kernel the heuristics choose for the shapes with M (the masked layout: expected_m) in
// [m_min, m_max] (the few-row kernel of bf16_gemm_nt and fp16_gemm_nt where M is at most 8, the skeleton's tiles
// otherwise), on `threads` threads (0: one per core), and loads them on CUDA device `device` unless it is
// nullopt. `on_kernel` (optional) is called after each kernel, from the compiling threads one at a time, with
// the kernel, the number done and the total. Throws fgemm::Error: InvalidValue for a shape or range that no
// GEMM could take, Unsupported for a device that is not sm_90, Runtime when a compilation fails.
std::vector<WarmedKernel> warmup(
    const std::vector<WarmupShape>& shapes, std::int64_t m_min, std::int64_t m_max, std::optional<int> device,
    int threads = 0,
    const std::function<void(const WarmedKernel&, std::size_t done, std::size_t total)>& on_kernel = {});

}  // namespace fgemm
