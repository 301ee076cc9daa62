// The public INT8 GEMMs: validate (the recipe named by the scales' shapes), then run on the backend of the
// tensors' device, as the FP8 ones do.
#include "fgemm/gemm_int8.hpp"

#include "api/backend.hpp"
#include "core/validate.hpp"
#include "cpu/cpu_gemm.hpp"
#include "cuda/gemm_sm90.hpp"

namespace fgemm {
namespace {

void run(const detail::GemmProblem& problem, Stream stream) {
  api::run_on_backend(problem, stream, cpu::gemm, cuda::gemm);
}

}  // namespace

void int8_gemm_nt(const TensorView& a, const TensorView& sa, const TensorView& b, const TensorView& sb,
                  const TensorView& d, const std::optional<TensorView>& c, const std::optional<TensorView>& bias,
                  Stream stream) {
  run(detail::validate_int8_normal(a, sa, b, sb, d, c, bias), stream);
}

void int8_gemm_nt(const TensorView& a, const TensorView& b, const TensorView& d, Stream stream) {
  run(detail::validate_int8_exact(a, b, d), stream);
}

void m_grouped_int8_gemm_nt_contiguous(const TensorView& a, const TensorView& sa, const TensorView& b,
                                       const TensorView& sb, const TensorView& d, const TensorView& grouped_layout,
                                       ContiguousLayout layout, Stream stream) {
  run(detail::validate_int8_contiguous(a, sa, b, sb, d, grouped_layout, layout), stream);
}

void m_grouped_int8_gemm_nt_masked(const TensorView& a, const TensorView& sa, const TensorView& b,
                                   const TensorView& sb, const TensorView& d, const TensorView& masked_m,
                                   std::int64_t expected_m, Stream stream) {
  run(detail::validate_int8_masked(a, sa, b, sb, d, masked_m, expected_m), stream);
}

}  // namespace fgemm
