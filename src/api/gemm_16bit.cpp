// The public BF16 and FP16 GEMMs: validate, then run on the backend of the tensors' device, as the FP8 ones do.
// The layout letters (fgemm/gemm_16bit.hpp): A is [M, K] for n and [K, M] for t; B is [N, K] for t and
// [K, N] for n.
#include "fgemm/gemm_16bit.hpp"

#include "api/backend.hpp"
#include "core/validate.hpp"
#include "cpu/cpu_gemm.hpp"
#include "cuda/gemm_sm90.hpp"

namespace fgemm {
namespace {

void run(const detail::GemmProblem& problem, Stream stream) {
  api::run_on_backend(problem, stream, cpu::gemm, cuda::gemm);
}

// A dense GEMM whose A is MN-major ([K, M]) where a_t, and whose B is MN-major ([K, N]) where b_n.
void dense(const detail::Gemm16Op& op, bool a_t, bool b_n, const TensorView& a, const TensorView& b,
           const TensorView& d, const std::optional<TensorView>& c, Stream stream) {
  run(detail::validate_dense_16bit(op, a_t, b_n, a, b, d, c), stream);
}

}  // namespace

void bf16_gemm_nt(const TensorView& a, const TensorView& b, const TensorView& d, const std::optional<TensorView>& c,
                  Stream stream) {
  dense({"bf16_gemm_nt", DType::BF16, "bf16_gemm_tt", "bf16_gemm_nn"}, false, false, a, b, d, c, stream);
}
void bf16_gemm_nn(const TensorView& a, const TensorView& b, const TensorView& d, const std::optional<TensorView>& c,
                  Stream stream) {
  dense({"bf16_gemm_nn", DType::BF16, "bf16_gemm_tn", "bf16_gemm_nt"}, false, true, a, b, d, c, stream);
}
void bf16_gemm_tn(const TensorView& a, const TensorView& b, const TensorView& d, const std::optional<TensorView>& c,
                  Stream stream) {
  dense({"bf16_gemm_tn", DType::BF16, "bf16_gemm_nn", "bf16_gemm_tt"}, true, true, a, b, d, c, stream);
}
void bf16_gemm_tt(const TensorView& a, const TensorView& b, const TensorView& d, const std::optional<TensorView>& c,
                  Stream stream) {
  dense({"bf16_gemm_tt", DType::BF16, "bf16_gemm_nt", "bf16_gemm_tn"}, true, false, a, b, d, c, stream);
}
void m_grouped_bf16_gemm_nt_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const TensorView& grouped_layout, ContiguousLayout layout, Stream stream) {
  run(detail::validate_contiguous_16bit(
          {"m_grouped_bf16_gemm_nt_contiguous", DType::BF16, nullptr, "m_grouped_bf16_gemm_nn_contiguous"}, false, a, b,
          d, grouped_layout, layout),
      stream);
}
void m_grouped_bf16_gemm_nn_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const TensorView& grouped_layout, ContiguousLayout layout, Stream stream) {
  run(detail::validate_contiguous_16bit(
          {"m_grouped_bf16_gemm_nn_contiguous", DType::BF16, nullptr, "m_grouped_bf16_gemm_nt_contiguous"}, true, a, b,
          d, grouped_layout, layout),
      stream);
}
void m_grouped_bf16_gemm_nt_masked(const TensorView& a, const TensorView& b, const TensorView& d,
                                   const TensorView& masked_m, std::int64_t expected_m, Stream stream) {
  run(detail::validate_masked_16bit({"m_grouped_bf16_gemm_nt_masked", DType::BF16, nullptr, nullptr}, a, b, d, masked_m,
                                    expected_m),
      stream);
}
void k_grouped_bf16_gemm_tn_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const std::vector<std::int64_t>& ks, const TensorView& ks_tensor,
                                       const std::optional<TensorView>& c, Stream stream) {
  run(detail::validate_k_grouped_16bit({"k_grouped_bf16_gemm_tn_contiguous", DType::BF16, nullptr, nullptr}, a, b, d,
                                       ks, ks_tensor, c),
      stream);
}

void fp16_gemm_nt(const TensorView& a, const TensorView& b, const TensorView& d, const std::optional<TensorView>& c,
                  Stream stream) {
  dense({"fp16_gemm_nt", DType::F16, "fp16_gemm_tt", "fp16_gemm_nn"}, false, false, a, b, d, c, stream);
}
void fp16_gemm_nn(const TensorView& a, const TensorView& b, const TensorView& d, const std::optional<TensorView>& c,
                  Stream stream) {
  dense({"fp16_gemm_nn", DType::F16, "fp16_gemm_tn", "fp16_gemm_nt"}, false, true, a, b, d, c, stream);
}
void fp16_gemm_tn(const TensorView& a, const TensorView& b, const TensorView& d, const std::optional<TensorView>& c,
                  Stream stream) {
  dense({"fp16_gemm_tn", DType::F16, "fp16_gemm_nn", "fp16_gemm_tt"}, true, true, a, b, d, c, stream);
}
void fp16_gemm_tt(const TensorView& a, const TensorView& b, const TensorView& d, const std::optional<TensorView>& c,
                  Stream stream) {
  dense({"fp16_gemm_tt", DType::F16, "fp16_gemm_nt", "fp16_gemm_tn"}, true, false, a, b, d, c, stream);
}
void m_grouped_fp16_gemm_nt_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const TensorView& grouped_layout, ContiguousLayout layout, Stream stream) {
  run(detail::validate_contiguous_16bit(
          {"m_grouped_fp16_gemm_nt_contiguous", DType::F16, nullptr, "m_grouped_fp16_gemm_nn_contiguous"}, false, a, b,
          d, grouped_layout, layout),
      stream);
}
void m_grouped_fp16_gemm_nn_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const TensorView& grouped_layout, ContiguousLayout layout, Stream stream) {
  run(detail::validate_contiguous_16bit(
          {"m_grouped_fp16_gemm_nn_contiguous", DType::F16, nullptr, "m_grouped_fp16_gemm_nt_contiguous"}, true, a, b,
          d, grouped_layout, layout),
      stream);
}
void m_grouped_fp16_gemm_nt_masked(const TensorView& a, const TensorView& b, const TensorView& d,
                                   const TensorView& masked_m, std::int64_t expected_m, Stream stream) {
  run(detail::validate_masked_16bit({"m_grouped_fp16_gemm_nt_masked", DType::F16, nullptr, nullptr}, a, b, d, masked_m,
                                    expected_m),
      stream);
}
void k_grouped_fp16_gemm_tn_contiguous(const TensorView& a, const TensorView& b, const TensorView& d,
                                       const std::vector<std::int64_t>& ks, const TensorView& ks_tensor,
                                       const std::optional<TensorView>& c, Stream stream) {
  run(detail::validate_k_grouped_16bit({"k_grouped_fp16_gemm_tn_contiguous", DType::F16, nullptr, nullptr}, a, b, d, ks,
                                       ks_tensor, c),
      stream);
}

}  // namespace fgemm
