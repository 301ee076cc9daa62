#include "core/quantize_validate.hpp"

#include <cstdint>
#include <string>

#include "core/quantize_checks.hpp"
#include "fgemm/common.cuh"
#include "fgemm/error.hpp"

namespace fgemm::detail {

QuantizeProblem validate_quantize(ScaleBlock block, const TensorView& x, const TensorView& x_fp8, const TensorView& sf,
                                  bool use_ue8m0) {
  const bool per_token = block == ScaleBlock::Token;
  const char* op = per_token ? "per_token_cast_to_fp8" : "per_block_cast_to_fp8";
  const char* x_arg = per_token ? "x" : "w";
  const char* q_arg = per_token ? "x_fp8" : "w_fp8";
  const QuantizeChecks check(op, x.device);

  check.matrix_or_stack(x, x_arg, per_token ? "[M, K]" : "[N, K]", per_token ? "[G, M, K]" : "[G, N, K]");
  if (x.dtype != DType::BF16 && x.dtype != DType::F32)
    check.fail(ErrorKind::InvalidType, x_arg,
               std::string("expected dtype bfloat16 or float32, got ") + dtype_name(x.dtype));
  const bool grouped = x.ndim == 3;
  const std::int64_t groups = grouped ? x.shape[0] : 1, rows = x.shape[x.ndim - 2], cols = x.shape[x.ndim - 1];
  const std::int64_t scale_rows = per_token ? rows : ceil_div(rows, 128);

  check.dtype(x_fp8, q_arg, DType::E4M3);
  check.dtype(sf, "sf", DType::F32);
  check.shape(x_fp8, q_arg, matrix_shape(grouped, groups, rows, cols), std::string("the shape of ") + x_arg);
  check.shape(sf, "sf", matrix_shape(grouped, groups, scale_rows, ceil_div(cols, 128)),
              per_token ? (grouped ? "[G, M, ceil(K/128)]" : "[M, ceil(K/128)]")
                        : (grouped ? "[G, ceil(N/128), ceil(K/128)]" : "[ceil(N/128), ceil(K/128)]"));
  check.storage(x, x_arg, Access::Read, Rows::Contiguous);
  check.storage(x_fp8, q_arg, Access::Write, Rows::Contiguous);
  check.storage(sf, "sf", Access::Write, Rows::AnyLayout);
  check.disjoint(x_fp8, q_arg, x, x_arg);
  check.disjoint(sf, "sf", x, x_arg);
  check.disjoint(sf, "sf", x_fp8, q_arg);

  QuantizeProblem p;
  p.block = block;
  p.device = x.device;
  p.input = x.dtype;
  p.use_ue8m0 = use_ue8m0;
  p.groups = groups, p.rows = rows, p.cols = cols;
  p.x = stack_of<const void>(x);
  p.q = stack_of<std::uint8_t>(x_fp8);
  p.sf = stack_of<float>(sf);
  return p;
}

ScaleCopyProblem validate_copy_scales(const TensorView& sf, const TensorView& out) {
  const QuantizeChecks check("copy_scales", sf.device);
  check.matrix_or_stack(sf, "sf", "[M, KB]", "[G, M, KB]");
  check.dtype(sf, "sf", DType::F32);
  check.dtype(out, "out", DType::F32);
  const bool grouped = sf.ndim == 3;
  const std::int64_t groups = grouped ? sf.shape[0] : 1, rows = sf.shape[sf.ndim - 2], cols = sf.shape[sf.ndim - 1];
  check.shape(out, "out", matrix_shape(grouped, groups, rows, cols), "the shape of sf");
  check.storage(sf, "sf", Access::Read, Rows::AnyLayout);
  check.storage(out, "out", Access::Write, Rows::AnyLayout);
  check.disjoint(out, "out", sf, "sf");

  ScaleCopyProblem p;
  p.device = sf.device;
  p.groups = groups, p.rows = rows, p.cols = cols;
  p.src = stack_of<const float>(sf);
  p.dst = stack_of<float>(out);
  return p;
}

}  // namespace fgemm::detail
