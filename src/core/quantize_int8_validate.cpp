#include "core/quantize_int8_validate.hpp"

#include <string>

#include "core/quantize_checks.hpp"
#include "fgemm/common.cuh"
#include "fgemm/error.hpp"

namespace fgemm::detail {
namespace {

// The expected shape of the scales and how the error message writes it.
struct ScaleShape {
  TensorView shape;
  std::string meaning;
};

ScaleShape scale_shape(Int8Quantizer quantizer, bool grouped, std::int64_t groups, std::int64_t rows,
                       std::int64_t cols, std::int64_t group_size) {
  const std::string lead = grouped ? "G, " : "";
  switch (quantizer) {
    case Int8Quantizer::PerToken:
    case Int8Quantizer::PerChannel: {
      const std::string row = quantizer == Int8Quantizer::PerToken ? "M" : "N";
      return {grouped ? shape_only({groups, rows}) : shape_only({rows}), "[" + lead + row + "]"};
    }
    case Int8Quantizer::PerTokenGroup:
      return {matrix_shape(grouped, groups, rows, ceil_div(cols, group_size)),
              "[" + lead + "M, ceil(K/" + std::to_string(group_size) + ")]"};
    case Int8Quantizer::PerBlock: break;
  }
  return {matrix_shape(grouped, groups, ceil_div(rows, 128), ceil_div(cols, 128)),
          "[" + lead + "ceil(N/128), ceil(K/128)]"};
}

// The scales' stack: a matrix's rows are the scales' last dimension, a stack's groups their first.
StridedStack<float> scale_stack(Int8Quantizer quantizer, const TensorView& sf) {
  if (scaling_of(quantizer) != Int8Scaling::Row) return stack_of<float>(sf);
  StridedStack<float> stack;
  stack.data = static_cast<float*>(sf.data);
  stack.group_stride = sf.ndim == 2 ? sf.strides[0] : 0;
  stack.row_stride = sf.strides[sf.ndim - 1];
  stack.col_stride = 0;
  return stack;
}

}  // namespace

bool is_int8_group_size(std::int64_t group_size) { return group_size == 32 || group_size == 64 || group_size == 128; }

Int8QuantizeProblem validate_quantize_int8(Int8Quantizer quantizer, const TensorView& x, const TensorView& codes,
                                           const TensorView& sf, std::int64_t group_size) {
  const Int8QuantizerNames names = names_of(quantizer);
  const bool of_weights = quantizer == Int8Quantizer::PerChannel || quantizer == Int8Quantizer::PerBlock;
  const QuantizeChecks check(names.op, x.device);

  check.matrix_or_stack(x, names.input, of_weights ? "[N, K]" : "[M, K]", of_weights ? "[G, N, K]" : "[G, M, K]");
  if (x.dtype != DType::BF16 && x.dtype != DType::F16 && x.dtype != DType::F32)
    check.fail(ErrorKind::InvalidType, names.input,
               std::string("expected dtype bfloat16, float16 or float32, got ") + dtype_name(x.dtype));
  if (quantizer == Int8Quantizer::PerTokenGroup && !is_int8_group_size(group_size))
    check.fail(ErrorKind::InvalidValue, "group_size", "must be 32, 64 or 128, got " + std::to_string(group_size));
  const bool grouped = x.ndim == 3;
  const std::int64_t groups = grouped ? x.shape[0] : 1, rows = x.shape[x.ndim - 2], cols = x.shape[x.ndim - 1];

  check.dtype(codes, names.codes, DType::I8);
  check.dtype(sf, "sf", DType::F32);
  check.shape(codes, names.codes, matrix_shape(grouped, groups, rows, cols),
              std::string("the shape of ") + names.input);
  const ScaleShape scales = scale_shape(quantizer, grouped, groups, rows, cols, group_size);
  check.shape(sf, "sf", scales.shape, scales.meaning);
  check.storage(x, names.input, Access::Read, Rows::Contiguous);
  check.storage(codes, names.codes, Access::Write, Rows::Contiguous);
  check.storage(sf, "sf", Access::Write, Rows::AnyLayout);
  check.disjoint(codes, names.codes, x, names.input);
  check.disjoint(sf, "sf", x, names.input);
  check.disjoint(sf, "sf", codes, names.codes);

  Int8QuantizeProblem p;
  p.quantizer = quantizer;
  p.device = x.device;
  p.input = x.dtype;
  p.groups = groups, p.rows = rows, p.cols = cols;
  p.group_cols = quantizer == Int8Quantizer::PerTokenGroup ? group_size : 128;
  p.x = stack_of<const void>(x);
  p.q = stack_of<std::int8_t>(codes);
  p.sf = scale_stack(quantizer, sf);
  return p;
}

}  // namespace fgemm::detail
