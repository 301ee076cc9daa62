#include "core/cast_transpose_validate.hpp"

#include <string>

#include "core/quantize_checks.hpp"
#include "fgemm/common.cuh"
#include "fgemm/error.hpp"

namespace fgemm::detail {
namespace {

constexpr const char* kOp = "cast_transpose_to_fp8";
constexpr const char* kGroupedOp = "grouped_cast_transpose_to_fp8";
constexpr const char* kBlockOp = "per_block_cast_transpose_to_fp8";

struct Outputs {
  const TensorView& x_fp8;
  const TensorView& sf;
  const TensorView& xt_fp8;
  const TensorView& sft;
};

// x [rows, cols] (or, for per_block_cast_to_fp8's stacks, [G, rows, cols]), and the outputs' dtypes.
void check_input(const QuantizeChecks& check, const TensorView& x, const Outputs& out, const char* x_shape,
                 ScaleBlock block = ScaleBlock::Token) {
  if (block == ScaleBlock::Token) {
    check.ndim(x, "x", 2, x_shape);
    check.nonnegative_sizes(x, "x");
  } else {
    check.matrix_or_stack(x, "x", x_shape, "[G, N, K]");
  }
  if (x.dtype != DType::BF16 && x.dtype != DType::F32)
    check.fail(ErrorKind::InvalidType, "x",
               std::string("expected dtype bfloat16 or float32, got ") + dtype_name(x.dtype));
  check.dtype(out.x_fp8, "x_fp8", DType::E4M3);
  check.dtype(out.sf, "sf", DType::F32);
  check.dtype(out.xt_fp8, "xt_fp8", DType::E4M3);
  check.dtype(out.sft, "sft", DType::F32);
}

// The row-wise outputs of `rows` rows (x's, unless the grouped operation pads them), as per_token_cast_to_fp8
// (block Token) or per_block_cast_to_fp8 (Block) checks them.
void check_row_wise(const QuantizeChecks& check, const TensorView& x, const Outputs& out, std::int64_t rows,
                    const char* rows_of, ScaleBlock block = ScaleBlock::Token) {
  const bool stacked = x.ndim == 3;
  const std::int64_t groups = stacked ? x.shape[0] : 1, cols = x.shape[x.ndim - 1];
  check.shape(out.x_fp8, "x_fp8", matrix_shape(stacked, groups, rows, cols), std::string("the shape of ") + rows_of);
  if (block == ScaleBlock::Token)
    check.shape(out.sf, "sf", shape_only({rows, ceil_div(cols, 128)}),
                std::string("one scale per row of ") + rows_of + " and 128 columns");
  else
    check.shape(out.sf, "sf", matrix_shape(stacked, groups, ceil_div(rows, 128), ceil_div(cols, 128)),
                std::string("one scale per 128 x 128 block of ") + rows_of);
}

// The storage of every tensor, no output overlapping the input or another output, and the problem.
CastTransposeProblem checked_problem(const QuantizeChecks& check, const TensorView& x, const Outputs& out,
                                     bool use_ue8m0) {
  check.storage(x, "x", Access::Read, Rows::Contiguous);
  check.storage(out.x_fp8, "x_fp8", Access::Write, Rows::Contiguous);
  check.storage(out.sf, "sf", Access::Write, Rows::AnyLayout);
  check.storage(out.xt_fp8, "xt_fp8", Access::Write, Rows::Contiguous);
  check.storage(out.sft, "sft", Access::Write, Rows::AnyLayout);
  const TensorView* tensors[] = {&x, &out.x_fp8, &out.sf, &out.xt_fp8, &out.sft};
  const char* names[] = {"x", "x_fp8", "sf", "xt_fp8", "sft"};
  for (int written = 1; written < 5; ++written)
    for (int other = 0; other < written; ++other)
      check.disjoint(*tensors[written], names[written], *tensors[other], names[other]);

  CastTransposeProblem p;
  p.device = x.device;
  p.input = x.dtype;
  p.use_ue8m0 = use_ue8m0;
  p.groups = x.ndim == 3 ? x.shape[0] : 1;
  p.rows = x.shape[x.ndim - 2], p.cols = x.shape[x.ndim - 1];
  p.x = stack_of<const void>(x);
  p.q = stack_of<std::uint8_t>(out.x_fp8);
  p.sf = stack_of<float>(out.sf);
  p.qt = static_cast<std::uint8_t*>(out.xt_fp8.data);
  p.sft = stack_of<float>(out.sft);
  return p;
}

}  // namespace

CastTransposeProblem validate_cast_transpose(const TensorView& x, const TensorView& x_fp8, const TensorView& sf,
                                             const TensorView& xt_fp8, const TensorView& sft, bool use_ue8m0) {
  const QuantizeChecks check(kOp, x.device);
  const Outputs out{x_fp8, sf, xt_fp8, sft};
  check_input(check, x, out, "[M, K]");
  const std::int64_t rows = x.shape[0], cols = x.shape[1];
  check_row_wise(check, x, out, rows, "x");
  check.shape(xt_fp8, "xt_fp8", shape_only({cols, rows}), "the shape of x's transpose, [K, M]");
  check.shape(sft, "sft", shape_only({cols, ceil_div(rows, 128)}), "[K, ceil(M/128)]");
  CastTransposeProblem p = checked_problem(check, x, out, use_ue8m0);
  if (rows > 0) p.bands.push_back({0, rows, 0, cols > 1 ? xt_fp8.strides[0] : rows, 0, rows});
  return p;
}

CastTransposeProblem validate_per_block_cast_transpose(const TensorView& x, const TensorView& x_fp8,
                                                       const TensorView& sf, const TensorView& xt_fp8,
                                                       const TensorView& sft, bool use_ue8m0) {
  const QuantizeChecks check(kBlockOp, x.device);
  const Outputs out{x_fp8, sf, xt_fp8, sft};
  check_input(check, x, out, "[N, K]", ScaleBlock::Block);
  const bool stacked = x.ndim == 3;
  const std::int64_t groups = stacked ? x.shape[0] : 1, rows = x.shape[x.ndim - 2], cols = x.shape[x.ndim - 1];
  check_row_wise(check, x, out, rows, "x", ScaleBlock::Block);
  check.shape(xt_fp8, "xt_fp8", matrix_shape(stacked, groups, cols, rows),
              stacked ? "the shape of x's matrices transposed, [G, K, N]" : "the shape of x's transpose, [K, N]");
  check.shape(sft, "sft", matrix_shape(stacked, groups, ceil_div(cols, 128), ceil_div(rows, 128)),
              stacked ? "one scale per 128 x 128 block of each matrix's transpose, [G, ceil(K/128), ceil(N/128)]"
                      : "one scale per 128 x 128 block of x's transpose, [ceil(K/128), ceil(N/128)]");
  CastTransposeProblem p = checked_problem(check, x, out, use_ue8m0);
  p.block = ScaleBlock::Block;
  const int transposed_rows = xt_fp8.ndim - 2;
  if (stacked) p.qt_group_stride = xt_fp8.strides[0];
  if (rows > 0) p.bands.push_back({0, rows, 0, cols > 1 ? xt_fp8.strides[transposed_rows] : rows, 0, rows});
  return p;
}

CastTransposeProblem validate_grouped_cast_transpose(const TensorView& x, const std::vector<std::int64_t>& ks,
                                                     const TensorView& x_fp8, const TensorView& sf,
                                                     const TensorView& xt_fp8, const TensorView& sft, bool use_ue8m0) {
  const QuantizeChecks check(kGroupedOp, x.device);
  const Outputs out{x_fp8, sf, xt_fp8, sft};
  check_input(check, x, out, "[sum(ks), H]");
  const std::int64_t x_rows = x.shape[0], cols = x.shape[1];
  std::int64_t counted = 0, rows = 0;  // x's rows, and the outputs': each expert's padded to a multiple of 128
  for (std::size_t g = 0; g < ks.size(); ++g) {
    if (ks[g] < 0)
      check.fail(ErrorKind::InvalidValue, "ks",
                 "expected non-negative counts, got ks[" + std::to_string(g) + "] = " + std::to_string(ks[g]));
    counted += ks[g];
    rows += ceil_div(ks[g], 128) * 128;
  }
  if (counted != x_rows)
    check.fail(ErrorKind::InvalidValue, "ks",
               "sums to " + std::to_string(counted) + ", but x has " + std::to_string(x_rows) + " rows");
  // The outputs are those of the padded x [rows, H], each expert's rows followed by zero rows up to a multiple of
  // 128.
  check_row_wise(check, x, out, rows, rows == x_rows ? "x" : "x with each expert's rows padded to a multiple of 128");
  check.shape(xt_fp8, "xt_fp8", shape_only({rows * cols}),
              "[sum(padded ks) * H]: expert g's [H, ks[g] rounded up to 128] block after those of the experts "
              "before it");
  check.shape(sft, "sft", shape_only({cols, rows / 128}), "[H, sum(padded ks)/128]");
  CastTransposeProblem p = checked_problem(check, x, out, use_ue8m0);
  p.grouped = true;
  p.rows = rows;
  std::int64_t first_row = 0, x_first_row = 0;
  for (const std::int64_t k : ks) {
    const std::int64_t padded = ceil_div(k, 128) * 128;
    if (k > 0) p.bands.push_back({first_row, padded, first_row * cols, padded, x_first_row, k});
    first_row += padded;
    x_first_row += k;
  }
  return p;
}

}  // namespace fgemm::detail
