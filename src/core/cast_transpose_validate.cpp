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

// x [rows, cols] and the row-wise outputs, as per_token_cast_to_fp8 (block Token) or per_block_cast_to_fp8 (Block)
// checks them.
void check_input_and_row_wise(const QuantizeChecks& check, const TensorView& x, const Outputs& out,
                              const char* x_shape, ScaleBlock block = ScaleBlock::Token) {
  check.ndim(x, "x", 2, x_shape);
  check.nonnegative_sizes(x, "x");
  if (x.dtype != DType::BF16 && x.dtype != DType::F32)
    check.fail(ErrorKind::InvalidType, "x",
               std::string("expected dtype bfloat16 or float32, got ") + dtype_name(x.dtype));
  check.dtype(out.x_fp8, "x_fp8", DType::E4M3);
  check.dtype(out.sf, "sf", DType::F32);
  check.dtype(out.xt_fp8, "xt_fp8", DType::E4M3);
  check.dtype(out.sft, "sft", DType::F32);
  const std::int64_t rows = x.shape[0], cols = x.shape[1];
  check.shape(out.x_fp8, "x_fp8", shape_only({rows, cols}), "the shape of x");
  if (block == ScaleBlock::Token)
    check.shape(out.sf, "sf", shape_only({rows, ceil_div(cols, 128)}), "one scale per row of x and 128 columns");
  else
    check.shape(out.sf, "sf", shape_only({ceil_div(rows, 128), ceil_div(cols, 128)}),
                "one scale per 128 x 128 block of x");
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
  p.rows = x.shape[0], p.cols = x.shape[1];
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
  check_input_and_row_wise(check, x, out, "[M, K]");
  const std::int64_t rows = x.shape[0], cols = x.shape[1];
  check.shape(xt_fp8, "xt_fp8", shape_only({cols, rows}), "the shape of x's transpose, [K, M]");
  check.shape(sft, "sft", shape_only({cols, ceil_div(rows, 128)}), "[K, ceil(M/128)]");
  CastTransposeProblem p = checked_problem(check, x, out, use_ue8m0);
  if (rows > 0) p.bands.push_back({0, rows, 0, cols > 1 ? xt_fp8.strides[0] : rows});
  return p;
}

CastTransposeProblem validate_per_block_cast_transpose(const TensorView& x, const TensorView& x_fp8,
                                                       const TensorView& sf, const TensorView& xt_fp8,
                                                       const TensorView& sft, bool use_ue8m0) {
  const QuantizeChecks check(kBlockOp, x.device);
  const Outputs out{x_fp8, sf, xt_fp8, sft};
  check_input_and_row_wise(check, x, out, "[N, K]", ScaleBlock::Block);
  const std::int64_t rows = x.shape[0], cols = x.shape[1];
  check.shape(xt_fp8, "xt_fp8", shape_only({cols, rows}), "the shape of x's transpose, [K, N]");
  check.shape(sft, "sft", shape_only({ceil_div(cols, 128), ceil_div(rows, 128)}),
              "one scale per 128 x 128 block of x's transpose, [ceil(K/128), ceil(N/128)]");
  CastTransposeProblem p = checked_problem(check, x, out, use_ue8m0);
  p.block = ScaleBlock::Block;
  if (rows > 0) p.bands.push_back({0, rows, 0, cols > 1 ? xt_fp8.strides[0] : rows});
  return p;
}

CastTransposeProblem validate_grouped_cast_transpose(const TensorView& x, const std::vector<std::int64_t>& ks,
                                                     const TensorView& x_fp8, const TensorView& sf,
                                                     const TensorView& xt_fp8, const TensorView& sft, bool use_ue8m0) {
  const QuantizeChecks check(kGroupedOp, x.device);
  const Outputs out{x_fp8, sf, xt_fp8, sft};
  check_input_and_row_wise(check, x, out, "[sum(ks), H]");
  const std::int64_t rows = x.shape[0], cols = x.shape[1];
  check.expert_counts(ks, rows, "x has");
  check.shape(xt_fp8, "xt_fp8", shape_only({rows * cols}),
              "[sum(ks) * H]: expert g's [H, ks[g]] block after those of the experts before it");
  check.shape(sft, "sft", shape_only({cols, rows / 128}), "[H, sum(ks)/128]");
  CastTransposeProblem p = checked_problem(check, x, out, use_ue8m0);
  p.grouped = true;
  std::int64_t first_row = 0;
  for (const std::int64_t k : ks) {
    if (k > 0) p.bands.push_back({first_row, k, first_row * cols, k});
    first_row += k;
  }
  return p;
}

}  // namespace fgemm::detail
