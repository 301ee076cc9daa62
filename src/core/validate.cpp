#include "core/validate.hpp"

#include <string>

#include "core/checker.hpp"
#include "core/contiguous_layout.hpp"
#include "fgemm/common.cuh"
#include "fgemm/error.hpp"

namespace fgemm::detail {
namespace {

// The checks shared by the three layouts, once the caller has checked the number of dimensions.
struct Operands {
  const TensorView& a;
  const TensorView& sfa;
  const TensorView& b;
  const TensorView& sfb;
  const TensorView& d;
};

void check_common(const Checker& check, const Operands& ops, std::int64_t k) {
  check.dtype(ops.a, "a", DType::E4M3);
  check.dtype(ops.b, "b", DType::E4M3);
  check.dtype(ops.sfa, "sfa", DType::F32);
  check.dtype(ops.sfb, "sfb", DType::F32);
  if (ops.d.dtype != DType::BF16 && ops.d.dtype != DType::F32)
    check.fail(ErrorKind::InvalidType, "d",
               std::string("expected dtype bfloat16 or float32, got ") + dtype_name(ops.d.dtype));
  if (k < 1) check.fail(ErrorKind::InvalidValue, "a", "needs K >= 1, got K = " + std::to_string(k));
  if (k % 16 != 0)
    check.fail(ErrorKind::InvalidValue, "a",
               "needs K to be a multiple of 16 (rows of FP8 start on 16-byte boundaries), got K = " +
                   std::to_string(k));
  const std::pair<const TensorView*, const char*> named[] = {
      {&ops.a, "a"}, {&ops.sfa, "sfa"}, {&ops.b, "b"}, {&ops.sfb, "sfb"}, {&ops.d, "d"}};
  for (auto [tensor, name] : named) {
    check.nonnegative_sizes(*tensor, name);
    check.present(*tensor, name);
    check.same_device(*tensor, name, ops.a.device);
  }
  check.tma_strides(ops.a, "a");
  check.tma_strides(ops.b, "b");
  check.tma_strides(ops.d, "d");
  check.non_overlapping(ops.d, "d");
  check.nonnegative_strides(ops.sfa, "sfa");
  check.nonnegative_strides(ops.sfb, "sfb");
}

void fill_operands(GemmProblem& p, const Operands& ops, int first_dim) {
  const int i = first_dim;  // 0 for matrices, 1 for stacks of matrices
  p.device = ops.a.device;
  p.a = static_cast<const std::uint8_t*>(ops.a.data);
  p.a_row_stride = ops.a.strides[i];
  p.sfa = static_cast<const float*>(ops.sfa.data);
  p.sfa_m_stride = ops.sfa.strides[i];
  p.sfa_k_stride = ops.sfa.strides[i + 1];
  p.d = ops.d.data;
  p.d_dtype = ops.d.dtype;
  p.d_row_stride = ops.d.strides[i];
  p.b = static_cast<const std::uint8_t*>(ops.b.data);
  p.sfb = static_cast<const float*>(ops.sfb.data);
  const int j = ops.b.ndim - 2;  // b is grouped in both M-grouped layouts
  p.b_row_stride = ops.b.strides[j];
  p.sfb_n_stride = ops.sfb.strides[j];
  p.sfb_k_stride = ops.sfb.strides[j + 1];
  if (j == 1) {
    p.b_group_stride = ops.b.strides[0];
    p.sfb_group_stride = ops.sfb.strides[0];
  }
  if (i == 1) {
    p.a_group_stride = ops.a.strides[0];
    p.sfa_group_stride = ops.sfa.strides[0];
    p.d_group_stride = ops.d.strides[0];
  }
}

}  // namespace

const char* layout_name(GemmLayout layout) {
  switch (layout) {
    case GemmLayout::Normal: return "normal";
    case GemmLayout::Contiguous: return "contiguous";
    case GemmLayout::Masked: return "masked";
    case GemmLayout::KGrouped: return "k-grouped";
  }
  return "unknown";
}

GemmProblem validate_normal(const TensorView& a, const TensorView& sfa, const TensorView& b,
                            const TensorView& sfb, const TensorView& d, const std::optional<TensorView>& c) {
  const Checker check("fp8_gemm_nt");
  check.ndim(a, "a", 2, "[M, K]");
  check.ndim(b, "b", 2, "[N, K]");
  const std::int64_t m = a.shape[0], k = a.shape[1], n = b.shape[0];
  check.shape(b, "b", {n, k}, "[N, K] with the K of a");
  check.at_least_one_column(n);
  const std::int64_t kb = ceil_div(k, 128);
  check.shape(sfa, "sfa", {m, kb}, "[M, ceil(K/128)]");
  check.shape(sfb, "sfb", {ceil_div(n, 128), kb}, "[ceil(N/128), ceil(K/128)]");
  check.shape(d, "d", {m, n}, "[M, N]");
  check_common(check, {a, sfa, b, sfb, d}, k);
  check.accumulator_input(c, d);

  GemmProblem p;
  p.layout = GemmLayout::Normal;
  p.m = m, p.n = n, p.k = k;
  fill_operands(p, {a, sfa, b, sfb, d}, 0);
  if (c) {
    p.c = static_cast<const float*>(c->data);
    p.c_row_stride = c->strides[0];
  }
  return p;
}

GemmProblem validate_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                const TensorView& sfb, const TensorView& d, const TensorView& grouped_layout,
                                ContiguousLayout form) {
  const Checker check("m_grouped_fp8_gemm_nt_contiguous");
  check.ndim(a, "a", 2, "[M_sum, K]");
  check.ndim(b, "b", 3, "[G, N, K]");
  const std::int64_t m = a.shape[0], k = a.shape[1], groups = b.shape[0], n = b.shape[1];
  if (groups < 1) check.fail(ErrorKind::InvalidValue, "b", "needs at least one group (G >= 1)");
  check.shape(b, "b", {groups, n, k}, "[G, N, K] with the K of a");
  check.at_least_one_column(n);
  const std::int64_t kb = ceil_div(k, 128);
  check.shape(sfa, "sfa", {m, kb}, "[M_sum, ceil(K/128)]");
  check.shape(sfb, "sfb", {groups, ceil_div(n, 128), kb}, "[G, ceil(N/128), ceil(K/128)] with the G of b");
  check.shape(d, "d", {m, n}, "[M_sum, N]");
  check_common(check, {a, sfa, b, sfb, d}, k);

  GemmProblem p;
  p.layout = GemmLayout::Contiguous;
  p.m = m, p.n = n, p.k = k, p.num_groups = groups;
  fill_operands(p, {a, sfa, b, sfb, d}, 0);
  set_contiguous_layout(check, p, grouped_layout, form, "m_indices");
  return p;
}

GemmProblem validate_masked(const TensorView& a, const TensorView& sfa, const TensorView& b,
                            const TensorView& sfb, const TensorView& d, const TensorView& masked_m,
                            std::int64_t expected_m) {
  const Checker check("m_grouped_fp8_gemm_nt_masked");
  check.ndim(a, "a", 3, "[G, M_max, K]");
  check.ndim(b, "b", 3, "[G, N, K]");
  const std::int64_t groups = a.shape[0], m = a.shape[1], k = a.shape[2], n = b.shape[1];
  if (groups < 1) check.fail(ErrorKind::InvalidValue, "a", "needs at least one group (G >= 1)");
  check.shape(b, "b", {groups, n, k}, "[G, N, K] with the G and K of a");
  check.at_least_one_column(n);
  const std::int64_t kb = ceil_div(k, 128);
  check.shape(sfa, "sfa", {groups, m, kb}, "[G, M_max, ceil(K/128)]");
  check.shape(sfb, "sfb", {groups, ceil_div(n, 128), kb}, "[G, ceil(N/128), ceil(K/128)]");
  check.shape(d, "d", {groups, m, n}, "[G, M_max, N]");
  check_common(check, {a, sfa, b, sfb, d}, k);
  check.masked_counts(masked_m, groups, expected_m, a.device);

  GemmProblem p;
  p.layout = GemmLayout::Masked;
  p.m = m, p.n = n, p.k = k, p.num_groups = groups, p.expected_m = expected_m;
  fill_operands(p, {a, sfa, b, sfb, d}, 1);
  p.masked_m = static_cast<const std::int32_t*>(masked_m.data);
  return p;
}

}  // namespace fgemm::detail
