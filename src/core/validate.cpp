#include "core/validate.hpp"

#include <numeric>
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

// K of the M-grouped and normal layouts: whole 16-byte rows of FP8, at least one.
void check_k(const Checker& check, std::int64_t k) {
  if (k < 1) check.fail(ErrorKind::InvalidValue, "a", "needs K >= 1, got K = " + std::to_string(k));
  if (k % 16 != 0)
    check.fail(ErrorKind::InvalidValue, "a",
               "needs K to be a multiple of 16 (rows of FP8 start on 16-byte boundaries), got K = " +
                   std::to_string(k));
}

void check_common(const Checker& check, const Operands& ops) {
  check.dtype(ops.a, "a", DType::E4M3);
  check.dtype(ops.b, "b", DType::E4M3);
  check.dtype(ops.sfa, "sfa", DType::F32);
  check.dtype(ops.sfb, "sfb", DType::F32);
  if (ops.d.dtype != DType::BF16 && ops.d.dtype != DType::F32)
    check.fail(ErrorKind::InvalidType, "d",
               std::string("expected dtype bfloat16 or float32, got ") + dtype_name(ops.d.dtype));
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
  // sfb's shape names the recipe: one scale per 128 x 128 block of B, or one per row of B and K block (1D1D; the
  // same thing where N is 1).
  const bool row_blocks = n > 1 && sfb.ndim == 2 && sfb.shape[0] == n && sfb.shape[1] == kb;
  if (!row_blocks)
    check.shape(sfb, "sfb", {ceil_div(n, 128), kb},
                "[ceil(N/128), ceil(K/128)] (128 x 128 blocks) or [N, ceil(K/128)] (1 x 128 blocks, recipe 1D1D)");
  check.shape(d, "d", {m, n}, "[M, N]");
  check_k(check, k);
  check_common(check, {a, sfa, b, sfb, d});
  check.accumulator_input(c, d);

  GemmProblem p;
  p.layout = GemmLayout::Normal;
  p.scaling = row_blocks ? Scaling::RowBlocks : Scaling::Block;
  p.m = m, p.n = n, p.k = k;
  fill_operands(p, {a, sfa, b, sfb, d}, 0);
  if (c) p.set_c(*c);
  return p;
}

GemmProblem validate_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                const TensorView& sfb, const TensorView& d, const TensorView& grouped_layout,
                                ContiguousLayout form, const std::optional<TensorView>& d_row_starts) {
  const Checker check("m_grouped_fp8_gemm_nt_contiguous");
  const auto [groups, m, n, k] = check.contiguous_dims(a, b);
  const std::int64_t kb = ceil_div(k, 128);
  check.shape(sfa, "sfa", {m, kb}, "[M_sum, ceil(K/128)]");
  check.shape(sfb, "sfb", {groups, ceil_div(n, 128), kb}, "[G, ceil(N/128), ceil(K/128)] with the G of b");
  if (d_row_starts && form != ContiguousLayout::Psum)
    check.fail(ErrorKind::InvalidValue, "d_row_starts",
               "packs D's rows in the prefix-sum form alone (use_psum_layout)");
  if (d_row_starts) {
    check.ndim(d, "d", 2, "[T, N], the experts' rows without their padding");
    check.shape(d, "d", {d.shape[0], n}, "[T, N] with the N of b");
  } else {
    check.shape(d, "d", {m, n}, "[M_sum, N]");
  }
  check_k(check, k);
  check_common(check, {a, sfa, b, sfb, d});

  GemmProblem p;
  p.layout = GemmLayout::Contiguous;
  p.m = m, p.n = n, p.k = k, p.num_groups = groups;
  fill_operands(p, {a, sfa, b, sfb, d}, 0);
  set_contiguous_layout(check, p, grouped_layout, form, "m_indices");
  if (d_row_starts) {
    check.index_vector(*d_row_starts, "d_row_starts", groups, "[G], each expert's first row in d", a.device);
    p.d_row_starts = static_cast<const std::int32_t*>(d_row_starts->data);
    p.d_rows = d.shape[0];
  }
  return p;
}

GemmProblem validate_masked(const TensorView& a, const TensorView& sfa, const TensorView& b,
                            const TensorView& sfb, const TensorView& d, const TensorView& masked_m,
                            std::int64_t expected_m) {
  const Checker check("m_grouped_fp8_gemm_nt_masked");
  const auto [groups, m, n, k] = check.masked_dims(a, b);
  const std::int64_t kb = ceil_div(k, 128);
  check.shape(sfa, "sfa", {groups, m, kb}, "[G, M_max, ceil(K/128)]");
  check.shape(sfb, "sfb", {groups, ceil_div(n, 128), kb}, "[G, ceil(N/128), ceil(K/128)]");
  check.shape(d, "d", {groups, m, n}, "[G, M_max, N]");
  check_k(check, k);
  check_common(check, {a, sfa, b, sfb, d});
  check.masked_counts(masked_m, groups, expected_m, a.device);

  GemmProblem p;
  p.layout = GemmLayout::Masked;
  p.m = m, p.n = n, p.k = k, p.num_groups = groups, p.expected_m = expected_m;
  fill_operands(p, {a, sfa, b, sfb, d}, 1);
  p.masked_m = static_cast<const std::int32_t*>(masked_m.data);
  return p;
}

GemmProblem validate_k_grouped_fp8(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                   const TensorView& sfb, const TensorView& d, const std::vector<std::int64_t>& ks,
                                   const TensorView& ks_tensor, const std::optional<TensorView>& c) {
  const Checker check("k_grouped_fp8_gemm_nt_contiguous");
  check.ndim(a, "a", 1, "[sum(ks) * M], each expert's [M, ks[g]] block in turn");
  check.ndim(b, "b", 1, "[sum(ks) * N], each expert's [N, ks[g]] block in turn");
  check.ndim(d, "d", 3, "[G, M, N]");
  const std::int64_t groups = d.shape[0], m = d.shape[1], n = d.shape[2];
  if (groups < 1) check.fail(ErrorKind::InvalidValue, "d", "needs at least one group (G >= 1)");
  check.at_least_one_column(n);
  check.count_per_expert(ks, groups);
  check.aligned_counts(ks);
  const std::int64_t k = std::accumulate(ks.begin(), ks.end(), std::int64_t(0));
  if (a.shape[0] != k * m || b.shape[0] != k * n)
    check.fail(ErrorKind::InvalidValue, "ks",
               "sums to " + std::to_string(k) + ", so a and b hold sum(ks) * M = " + std::to_string(k * m) +
                   " and sum(ks) * N = " + std::to_string(k * n) + " elements (M, N from d), but they hold " +
                   std::to_string(a.shape[0]) + " and " + std::to_string(b.shape[0]));
  const std::int64_t kb = k / kScaleBlock;  // every expert's K is whole blocks
  check.shape(sfa, "sfa", {m, kb}, "[M, sum(ks) / 128]");
  check.shape(sfb, "sfb", {n, kb}, "[N, sum(ks) / 128]");
  check_common(check, {a, sfa, b, sfb, d});
  // A float32 D accumulates a weight gradient, D[g] = C[g] + A_g B_g^T: C is required (it may be d itself). A
  // bfloat16 D is the gradient itself, with an optional float32 C.
  if (d.dtype == DType::F32 && !c)
    check.fail(ErrorKind::InvalidValue, "c",
               "is required where d is float32: D[g] = C[g] + A_g B_g^T accumulates onto C (which may be d "
               "itself); for the gradient alone, give a bfloat16 d and no c");
  check.accumulator_input(c, d);
  check.index_vector(ks_tensor, "ks_tensor", groups, "[G], the experts' K on the device", a.device);

  GemmProblem p;
  p.layout = GemmLayout::KGrouped;
  p.scaling = Scaling::RowBlocks;
  p.m = m, p.n = n, p.k = k, p.num_groups = groups;
  p.device = a.device;
  p.a = static_cast<const std::uint8_t*>(a.data);
  p.b = static_cast<const std::uint8_t*>(b.data);
  p.sfa = static_cast<const float*>(sfa.data);
  p.sfa_m_stride = sfa.strides[0], p.sfa_k_stride = sfa.strides[1];
  p.sfb = static_cast<const float*>(sfb.data);
  p.sfb_n_stride = sfb.strides[0], p.sfb_k_stride = sfb.strides[1];
  p.d = d.data;
  p.d_dtype = d.dtype;
  p.d_row_stride = d.strides[1];
  p.d_group_stride = d.strides[0];
  if (c) p.set_c(*c);
  p.ks = ks;
  p.ks_tensor = static_cast<const std::int32_t*>(ks_tensor.data);
  return p;
}

}  // namespace fgemm::detail
