// Argument checking of the INT8 GEMMs (fgemm/gemm_int8.hpp): the operands, and the recipe the shapes of the
// scales name (docs/ARCHITECTURE.md, Semantics).
#include <string>

#include "core/checker.hpp"
#include "core/contiguous_layout.hpp"
#include "core/validate.hpp"
#include "fgemm/common.cuh"
#include "fgemm/error.hpp"

namespace fgemm::detail {
namespace {

// A, B and D of one call.
struct Int8Operands {
  const TensorView& a;
  const TensorView& b;
  const TensorView& d;
};

// What every INT8 GEMM checks of A, B and D once their shapes are known: types, K, devices and strides.
void check_operands(const Checker& check, const Int8Operands& ops, std::int64_t k, bool exact) {
  check.dtype(ops.a, "a", DType::I8);
  check.dtype(ops.b, "b", DType::I8);
  if (exact) {
    check.dtype(ops.d, "d", DType::I32);
  } else if (ops.d.dtype != DType::BF16 && ops.d.dtype != DType::F16 && ops.d.dtype != DType::F32) {
    check.fail(ErrorKind::InvalidType, "d",
               std::string("expected dtype bfloat16, float16 or float32 (int32 only without scales), got ") +
                   dtype_name(ops.d.dtype));
  }
  if (k < 1) check.fail(ErrorKind::InvalidValue, "a", "needs K >= 1, got K = " + std::to_string(k));
  if (k % 16 != 0)
    check.fail(ErrorKind::InvalidValue, "a",
               "needs K to be a multiple of 16 (rows of int8 start on 16-byte boundaries), got K = " +
                   std::to_string(k));
  const std::pair<const TensorView*, const char*> named[] = {{&ops.a, "a"}, {&ops.b, "b"}, {&ops.d, "d"}};
  for (auto [tensor, name] : named) {
    check.nonnegative_sizes(*tensor, name);
    check.present(*tensor, name);
    check.same_device(*tensor, name, ops.a.device);
  }
  check.tma_strides(ops.a, "a");
  check.tma_strides(ops.b, "b");
  check.tma_strides(ops.d, "d");
  check.non_overlapping(ops.d, "d");
}

bool has_shape(const TensorView& t, std::initializer_list<std::int64_t> dims) {
  if (t.ndim != static_cast<int>(dims.size())) return false;
  int i = 0;
  for (auto dim : dims)
    if (t.shape[i++] != dim) return false;
  return true;
}

// How the messages of one layout write the scales' expected shapes: per token (sa) and per channel (sb), e.g.
// "[M], [M, 1] or 0-d", and DeepSeek's blocks.
struct ScaleShapes {
  const char* per_token;
  const char* per_channel;
  const char* block_sa;
  const char* block_sb;
};

// A per-token or per-channel scale vector: where `t` has one of the shapes, its strides (element `row` of group
// `group` at group * group_stride + row * row_stride).
struct ScaleVector {
  bool matches = false;
  std::int64_t row_stride = 0;
  std::int64_t group_stride = 0;
};

// sa per token: [rows], [rows, 1] or 0-d; stacked (masked): [G, rows] or [G, rows, 1].
ScaleVector per_token(const TensorView& sa, std::int64_t groups, std::int64_t rows, bool stacked) {
  if (!stacked) {
    if (sa.ndim == 0) return {true, 0, 0};
    if (has_shape(sa, {rows}) || has_shape(sa, {rows, 1})) return {true, sa.strides[0], 0};
    return {};
  }
  if (has_shape(sa, {groups, rows}) || has_shape(sa, {groups, rows, 1})) return {true, sa.strides[1], sa.strides[0]};
  return {};
}

// sb per channel: [N], [1, N] or 0-d; grouped: [G, N] or, one scale per expert, [G] or [G, 1].
ScaleVector per_channel(const TensorView& sb, std::int64_t groups, std::int64_t n, bool grouped) {
  if (!grouped) {
    if (sb.ndim == 0) return {true, 0, 0};
    if (has_shape(sb, {n})) return {true, sb.strides[0], 0};
    if (has_shape(sb, {1, n})) return {true, sb.strides[1], 0};
    return {};
  }
  if (has_shape(sb, {groups, n})) return {true, n == 1 ? 0 : sb.strides[1], sb.strides[0]};
  if (has_shape(sb, {groups}) || has_shape(sb, {groups, 1})) return {true, 0, sb.strides[0]};
  return {};
}

// The recipe of sa and sb, written into the problem with their strides; the layout's expected shapes name
// what fits in the messages.
struct Int8Layout {
  std::int64_t groups;
  std::int64_t rows;  // of A (per group where stacked)
  bool stacked_a;     // masked: A and sa have a group dimension
  bool grouped_b;     // B and sb have a group dimension
  ScaleShapes names;
};

void set_scales(const Checker& check, GemmProblem& p, const TensorView& sa, const TensorView& sb,
                const Int8Layout& layout) {
  for (auto [tensor, name] : {std::pair{&sa, "sa"}, std::pair{&sb, "sb"}}) {
    check.dtype(*tensor, name, DType::F32);
    check.nonnegative_sizes(*tensor, name);
    check.present(*tensor, name);
    check.same_device(*tensor, name, p.device);
    check.nonnegative_strides(*tensor, name);
  }
  p.sfa = static_cast<const float*>(sa.data);
  p.sfb = static_cast<const float*>(sb.data);
  const ScaleVector token = per_token(sa, layout.groups, layout.rows, layout.stacked_a);
  const ScaleVector channel = per_channel(sb, layout.groups, p.n, layout.grouped_b);
  if (token.matches && channel.matches) {
    p.scaling = Scaling::RowColumn;
    p.sfa_m_stride = token.row_stride, p.sfa_group_stride = token.group_stride;
    p.sfb_n_stride = channel.row_stride, p.sfb_group_stride = channel.group_stride;
    return;
  }
  // DeepSeek's blocks: sa [(G,) rows, KB], sb [(G,) NB, KB].
  const std::int64_t kb = ceil_div(p.k, kScaleBlock), nb = ceil_div(p.n, kScaleBlock);
  const bool block_a =
      layout.stacked_a ? has_shape(sa, {layout.groups, layout.rows, kb}) : has_shape(sa, {layout.rows, kb});
  const bool block_b = layout.grouped_b ? has_shape(sb, {layout.groups, nb, kb}) : has_shape(sb, {nb, kb});
  if (block_a && block_b) {
    p.scaling = Scaling::Block;
    const int i = layout.stacked_a ? 1 : 0, j = layout.grouped_b ? 1 : 0;
    p.sfa_m_stride = sa.strides[i], p.sfa_k_stride = sa.strides[i + 1];
    p.sfa_group_stride = layout.stacked_a ? sa.strides[0] : 0;
    p.sfb_n_stride = sb.strides[j], p.sfb_k_stride = sb.strides[j + 1];
    p.sfb_group_stride = layout.grouped_b ? sb.strides[0] : 0;
    return;
  }
  const ScaleShapes& names = layout.names;
  if (token.matches && !block_a)
    check.fail(ErrorKind::InvalidValue, "sb",
               std::string("expected ") + names.per_channel + " (per channel, as sa is per token), got shape " +
                   shape_string(sb));
  if (block_a)
    check.fail(ErrorKind::InvalidValue, "sb",
               std::string("expected ") + names.block_sb + " (128 x 128 blocks, as sa is per 1 x 128 block)" +
                   (token.matches ? std::string(" or ") + names.per_channel + " (per channel)" : "") +
                   ", got shape " + shape_string(sb));
  check.fail(ErrorKind::InvalidValue, "sa",
             std::string("expected ") + names.per_token + " (per token) or " + names.block_sa +
                 " (1 x 128 blocks), got shape " + shape_string(sa));
}

void fill_operands(GemmProblem& p, const Int8Operands& ops, bool stacked_a, bool grouped_b) {
  const int i = stacked_a ? 1 : 0;
  p.ab_dtype = DType::I8;
  p.device = ops.a.device;
  p.a = static_cast<const std::uint8_t*>(ops.a.data);
  p.a_row_stride = ops.a.strides[i];
  p.a_group_stride = stacked_a ? ops.a.strides[0] : 0;
  p.b = static_cast<const std::uint8_t*>(ops.b.data);
  p.b_row_stride = ops.b.strides[grouped_b ? 1 : 0];
  p.b_group_stride = grouped_b ? ops.b.strides[0] : 0;
  p.d = ops.d.data;
  p.d_dtype = ops.d.dtype;
  p.d_row_stride = ops.d.strides[i];
  p.d_group_stride = stacked_a ? ops.d.strides[0] : 0;
}

// bias: [N], contiguous, FP32 or D's 16-bit type, on D's device.
void set_bias(const Checker& check, GemmProblem& p, const std::optional<TensorView>& bias, const TensorView& d) {
  if (!bias) return;
  if (bias->dtype != DType::F32 && (bias->dtype != d.dtype || d.dtype == DType::F32))
    check.fail(ErrorKind::InvalidType, "bias",
               std::string("expected dtype float32") +
                   (d.dtype != DType::F32 ? std::string(" or ") + dtype_name(d.dtype) : "") +
                   " (float32 or the dtype of d), got " + dtype_name(bias->dtype));
  check.shape(*bias, "bias", {p.n}, "[N], one value per column of d");
  check.present(*bias, "bias");
  check.same_device(*bias, "bias", d.device);
  check.contiguous_vector(*bias, "bias");
  p.bias = bias->data;
  p.bias_dtype = bias->dtype;
}

// The normal layout's A [M, K], B [N, K] and D [M, N], checked and filled in.
GemmProblem normal_problem(const Checker& check, const Int8Operands& ops, bool exact) {
  check.ndim(ops.a, "a", 2, "[M, K]");
  check.ndim(ops.b, "b", 2, "[N, K]");
  const std::int64_t m = ops.a.shape[0], k = ops.a.shape[1], n = ops.b.shape[0];
  check.shape(ops.b, "b", {n, k}, "[N, K] with the K of a");
  check.at_least_one_column(n);
  check.shape(ops.d, "d", {m, n}, "[M, N]");
  check_operands(check, ops, k, exact);
  GemmProblem p;
  p.layout = GemmLayout::Normal;
  p.m = m, p.n = n, p.k = k;
  fill_operands(p, ops, false, false);
  return p;
}

}  // namespace

GemmProblem validate_int8_normal(const TensorView& a, const TensorView& sa, const TensorView& b, const TensorView& sb,
                                 const TensorView& d, const std::optional<TensorView>& c,
                                 const std::optional<TensorView>& bias) {
  const Checker check("int8_gemm_nt");
  GemmProblem p = normal_problem(check, {a, b, d}, false);
  check.accumulator_input(c, d);
  set_scales(check, p, sa, sb, {1, p.m, false, false, {"[M], [M, 1] or 0-d", "[N], [1, N] or 0-d",
                                                    "[M, ceil(K/128)]", "[ceil(N/128), ceil(K/128)]"}});
  set_bias(check, p, bias, d);
  if (c) p.set_c(*c);
  return p;
}

GemmProblem validate_int8_exact(const TensorView& a, const TensorView& b, const TensorView& d) {
  GemmProblem p = normal_problem(Checker("int8_gemm_nt"), {a, b, d}, true);
  p.scaling = Scaling::None;
  return p;
}

GemmProblem validate_int8_contiguous(const TensorView& a, const TensorView& sa, const TensorView& b,
                                     const TensorView& sb, const TensorView& d, const TensorView& grouped_layout,
                                     ContiguousLayout form) {
  const Checker check("m_grouped_int8_gemm_nt_contiguous");
  const auto [groups, m, n, k] = check.contiguous_dims(a, b);
  check.shape(d, "d", {m, n}, "[M_sum, N]");
  check_operands(check, {a, b, d}, k, false);

  GemmProblem p;
  p.layout = GemmLayout::Contiguous;
  p.m = m, p.n = n, p.k = k, p.num_groups = groups;
  fill_operands(p, {a, b, d}, false, true);
  set_scales(check, p, sa, sb, {groups, m, false, true, {"[M_sum], [M_sum, 1] or 0-d", "[G, N], [G] or [G, 1]",
                                                         "[M_sum, ceil(K/128)]", "[G, ceil(N/128), ceil(K/128)]"}});
  set_contiguous_layout(check, p, grouped_layout, form, "grouped_layout");
  return p;
}

GemmProblem validate_int8_masked(const TensorView& a, const TensorView& sa, const TensorView& b, const TensorView& sb,
                                 const TensorView& d, const TensorView& masked_m, std::int64_t expected_m) {
  const Checker check("m_grouped_int8_gemm_nt_masked");
  const auto [groups, m, n, k] = check.masked_dims(a, b);
  check.shape(d, "d", {groups, m, n}, "[G, M_max, N]");
  check_operands(check, {a, b, d}, k, false);
  check.masked_counts(masked_m, groups, expected_m, a.device);

  GemmProblem p;
  p.layout = GemmLayout::Masked;
  p.m = m, p.n = n, p.k = k, p.num_groups = groups, p.expected_m = expected_m;
  fill_operands(p, {a, b, d}, true, true);
  set_scales(check, p, sa, sb, {groups, m, true, true, {"[G, M_max] or [G, M_max, 1]", "[G, N], [G] or [G, 1]",
                                                        "[G, M_max, ceil(K/128)]", "[G, ceil(N/128), ceil(K/128)]"}});
  p.masked_m = static_cast<const std::int32_t*>(masked_m.data);
  return p;
}

}  // namespace fgemm::detail
