#include <string>

#include "core/checker.hpp"
#include "core/contiguous_layout.hpp"
#include "core/validate.hpp"
#include "fgemm/common.cuh"

namespace fgemm::detail {
namespace {

// How one operand of a 16-bit GEMM is stored, as its layout letter says.
struct Storage {
  const char* arg;
  bool mn_major;             // [K, M] / [K, N] rather than [M, K] / [N, K]
  const char* dims;          // the shape the letter names, for messages
  const char* other_letter;  // the operation that takes the other storage order, or nullptr
};

// An operand whose last dimension is not contiguous is most likely a transposed view of the other storage
// order, which is a different layout letter: say so rather than copy it.
void check_storage(const Checker& check, const TensorView& t, const Storage& storage) {
  const int last = t.ndim - 1;
  if (t.shape[last] > 1 && t.strides[last] != 1) {
    std::string what = std::string("must be stored as ") + storage.dims +
                       " with its last dimension contiguous (stride 1), got strides " + Checker::strides_of(t);
    if (storage.other_letter != nullptr)
      what += std::string("; for the other storage order (a transposed view) call fgemm.") + storage.other_letter;
    check.fail(ErrorKind::InvalidValue, storage.arg, what);
  }
}

// What every 16-bit GEMM checks of A, B and D once their shapes are known.
void check_operands(const Checker& check, DType dtype, const TensorView& a, const Storage& a_storage,
                    const TensorView& b, const Storage& b_storage, const TensorView& d, bool d_f32_only) {
  check.dtype(a, "a", dtype);
  check.dtype(b, "b", dtype);
  if (d_f32_only)
    check.dtype(d, "d", DType::F32);
  else if (d.dtype != dtype && d.dtype != DType::F32)
    check.fail(ErrorKind::InvalidType, "d",
               std::string("expected dtype ") + dtype_name(dtype) + " or float32, got " + dtype_name(d.dtype));
  const std::pair<const TensorView*, const char*> named[] = {{&a, "a"}, {&b, "b"}, {&d, "d"}};
  for (auto [tensor, name] : named) {
    check.nonnegative_sizes(*tensor, name);
    check.present(*tensor, name);
    check.same_device(*tensor, name, a.device);
  }
  check_storage(check, a, a_storage);
  check_storage(check, b, b_storage);
  check.tma_strides(a, "a");
  check.tma_strides(b, "b");
  check.tma_strides(d, "d");
  check.non_overlapping(d, "d");
}

void check_k(const Checker& check, std::int64_t k) {
  if (k < 1) check.fail(ErrorKind::InvalidValue, "a", "needs K >= 1, got K = " + std::to_string(k));
}

// The problem's A, B, D and C, matrices or stacks of matrices (group stride from the first dimension).
void fill(GemmProblem& p, DType dtype, const TensorView& a, bool a_mn_major, const TensorView& b, bool b_mn_major,
          const TensorView& d, const std::optional<TensorView>& c) {
  const auto outer = [](const TensorView& t) { return t.strides[t.ndim - 2]; };
  const auto group = [](const TensorView& t) { return t.ndim == 3 ? t.strides[0] : 0; };
  p.device = a.device;
  p.ab_dtype = dtype;
  p.scaling = Scaling::None;
  p.a = static_cast<const std::uint8_t*>(a.data);
  p.a_mn_major = a_mn_major;
  p.a_row_stride = outer(a);
  p.a_group_stride = group(a);
  p.b = static_cast<const std::uint8_t*>(b.data);
  p.b_mn_major = b_mn_major;
  p.b_row_stride = outer(b);
  p.b_group_stride = group(b);
  p.d = d.data;
  p.d_dtype = d.dtype;
  p.d_row_stride = outer(d);
  p.d_group_stride = group(d);
  if (c) p.set_c(*c);
}

}  // namespace

GemmProblem validate_dense_16bit(const Gemm16Op& op, bool a_mn_major, bool b_mn_major, const TensorView& a,
                                 const TensorView& b, const TensorView& d, const std::optional<TensorView>& c) {
  const Checker check(op.name);
  check.ndim(a, "a", 2, a_mn_major ? "[K, M]" : "[M, K]");
  check.ndim(b, "b", 2, b_mn_major ? "[K, N]" : "[N, K]");
  const std::int64_t m = a.shape[a_mn_major ? 1 : 0], k = a.shape[a_mn_major ? 0 : 1];
  const std::int64_t n = b.shape[b_mn_major ? 1 : 0];
  if (b_mn_major)
    check.shape(b, "b", {k, n}, "[K, N] with the K of a");
  else
    check.shape(b, "b", {n, k}, "[N, K] with the K of a");
  check.at_least_one_column(n);
  check_k(check, k);
  check.shape(d, "d", {m, n}, "[M, N]");
  check_operands(check, op.dtype, a, {"a", a_mn_major, a_mn_major ? "[K, M]" : "[M, K]", op.other_a},
                 b, {"b", b_mn_major, b_mn_major ? "[K, N]" : "[N, K]", op.other_b}, d, false);
  check.accumulator_input(c, d);

  GemmProblem p;
  p.layout = GemmLayout::Normal;
  p.m = m, p.n = n, p.k = k;
  fill(p, op.dtype, a, a_mn_major, b, b_mn_major, d, c);
  return p;
}

GemmProblem validate_contiguous_16bit(const Gemm16Op& op, bool b_mn_major, const TensorView& a, const TensorView& b,
                                      const TensorView& d, const TensorView& grouped_layout, ContiguousLayout form) {
  const Checker check(op.name);
  const auto [groups, m, n, k] = check.contiguous_dims(a, b, b_mn_major);
  check_k(check, k);
  check.shape(d, "d", {m, n}, "[M_sum, N]");
  check_operands(check, op.dtype, a, {"a", false, "[M_sum, K]", nullptr}, b,
                 {"b", b_mn_major, b_mn_major ? "[G, K, N]" : "[G, N, K]", op.other_b}, d, false);

  GemmProblem p;
  p.layout = GemmLayout::Contiguous;
  p.m = m, p.n = n, p.k = k, p.num_groups = groups;
  fill(p, op.dtype, a, false, b, b_mn_major, d, std::nullopt);
  set_contiguous_layout(check, p, grouped_layout, form, "grouped_layout");
  return p;
}

GemmProblem validate_masked_16bit(const Gemm16Op& op, const TensorView& a, const TensorView& b, const TensorView& d,
                                  const TensorView& masked_m, std::int64_t expected_m) {
  const Checker check(op.name);
  const auto [groups, m, n, k] = check.masked_dims(a, b);
  check_k(check, k);
  check.shape(d, "d", {groups, m, n}, "[G, M_max, N]");
  check_operands(check, op.dtype, a, {"a", false, "[G, M_max, K]", nullptr}, b, {"b", false, "[G, N, K]", nullptr},
                 d, false);
  check.masked_counts(masked_m, groups, expected_m, a.device);

  GemmProblem p;
  p.layout = GemmLayout::Masked;
  p.m = m, p.n = n, p.k = k, p.num_groups = groups, p.expected_m = expected_m;
  fill(p, op.dtype, a, false, b, false, d, std::nullopt);
  p.masked_m = static_cast<const std::int32_t*>(masked_m.data);
  return p;
}

GemmProblem validate_k_grouped_16bit(const Gemm16Op& op, const TensorView& a, const TensorView& b,
                                     const TensorView& d, const std::vector<std::int64_t>& ks,
                                     const TensorView& ks_tensor, const std::optional<TensorView>& c) {
  const Checker check(op.name);
  check.ndim(a, "a", 2, "[sum(ks), M]");
  check.ndim(b, "b", 2, "[sum(ks), N]");
  check.ndim(d, "d", 3, "[G, M, N]");
  const std::int64_t k = a.shape[0], m = a.shape[1], n = b.shape[1], groups = d.shape[0];
  if (groups < 1) check.fail(ErrorKind::InvalidValue, "d", "needs at least one group (G >= 1)");
  check.shape(b, "b", {k, n}, "[sum(ks), N] with the rows of a");
  check.at_least_one_column(n);
  check.shape(d, "d", {groups, m, n}, "[G, M, N] with the M of a and the N of b");
  check_operands(check, op.dtype, a, {"a", true, "[sum(ks), M]", nullptr}, b, {"b", true, "[sum(ks), N]", nullptr},
                 d, true);
  check.accumulator_input(c, d);
  check.count_per_expert(ks, groups);
  check.expert_counts(ks, k, "a and b have");
  check.index_vector(ks_tensor, "ks_tensor", groups, "[G], the experts' K on the device", a.device);

  GemmProblem p;
  p.layout = GemmLayout::KGrouped;
  p.m = m, p.n = n, p.k = k, p.num_groups = groups;
  fill(p, op.dtype, a, true, b, true, d, c);
  p.ks = ks;
  p.ks_tensor = static_cast<const std::int32_t*>(ks_tensor.data);
  return p;
}

}  // namespace fgemm::detail
