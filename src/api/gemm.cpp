// The public GEMM operations: validate, then run on the backend of the tensors' device.
#include "api/backend.hpp"
#include "core/settings.hpp"
#include "core/validate.hpp"
#include "cpu/cpu_gemm.hpp"
#include "cuda/gemm_sm90.hpp"
#include "fgemm/fgemm.hpp"

namespace fgemm {
namespace {

void run(const detail::GemmProblem& problem, Stream stream) {
  api::run_on_backend(problem, stream, cpu::gemm, cuda::gemm);
}

}  // namespace

void fp8_gemm_nt(const TensorView& a, const TensorView& sfa, const TensorView& b, const TensorView& sfb,
                 const TensorView& d, const std::optional<TensorView>& c, Stream stream) {
  run(detail::validate_normal(a, sfa, b, sfb, d, c), stream);
}

void m_grouped_fp8_gemm_nt_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                      const TensorView& sfb, const TensorView& d, const TensorView& grouped_layout,
                                      ContiguousLayout layout, const std::optional<TensorView>& d_row_starts,
                                      Stream stream) {
  run(detail::validate_contiguous(a, sfa, b, sfb, d, grouped_layout, layout, d_row_starts), stream);
}

void m_grouped_fp8_gemm_nt_masked(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                  const TensorView& sfb, const TensorView& d, const TensorView& masked_m,
                                  std::int64_t expected_m, Stream stream) {
  run(detail::validate_masked(a, sfa, b, sfb, d, masked_m, expected_m), stream);
}

void k_grouped_fp8_gemm_nt_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                      const TensorView& sfb, const TensorView& d, const std::vector<std::int64_t>& ks,
                                      const TensorView& ks_tensor, const std::optional<TensorView>& c,
                                      Stream stream) {
  run(detail::validate_k_grouped_fp8(a, sfa, b, sfb, d, ks, ks_tensor, c), stream);
}

void set_num_sms(int num_sms) {
  if (num_sms < 0)
    throw Error(ErrorKind::InvalidValue,
                "fgemm.set_num_sms: argument 'num_sms' must be >= 0 (0 = all SMs), got " + std::to_string(num_sms));
  detail::request_num_sms(num_sms);
}

int get_num_sms() {
  const int requested = detail::requested_num_sms();
  return requested > 0 ? requested : cuda::device_sm_count();
}

void set_pdl(bool enable) { detail::request_programmatic_dependent_launch(enable); }

bool get_pdl() { return detail::programmatic_dependent_launch(); }

}  // namespace fgemm
