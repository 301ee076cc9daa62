#include "cuda/quantize_int8.hpp"

#include <algorithm>
#include <sstream>

#include "cuda/quantize_launch.hpp"
#include "fgemm/common.cuh"
#include "fgemm/quantize_params.cuh"

namespace fgemm::cuda {
namespace {

using detail::Int8Scaling;

// The kernel function of quantize.cuh that computes a scaling's blocks.
const char* kernel_function(Int8Scaling scaling) {
  switch (scaling) {
    case Int8Scaling::Row: return "per_row_cast";
    case Int8Scaling::Group: return "per_token_group_cast";
    case Int8Scaling::Block: break;
  }
  return "per_block_cast";
}

std::int64_t ctas_of(const detail::Int8QuantizeProblem& p) {
  switch (p.scaling()) {
    case Int8Scaling::Row: {
      // Sized for a K that fits 32 bits; quantize_grid refuses any other.
      const auto cols = static_cast<std::uint32_t>(std::min(p.cols, kMaxGridX));
      return ceil_div(p.rows, quant::kThreadsPerCta / quant::row_team_threads(cols));
    }
    case Int8Scaling::Group: return ceil_div(p.rows * ceil_div(p.cols, quant::kColsPerWarp), quant::kWarpsPerCta);
    case Int8Scaling::Block: break;
  }
  return ceil_div(p.rows, quant::kBlock) * ceil_div(p.cols, quant::kBlock);
}

}  // namespace

std::string Int8QuantizeKernel::name() const {
  std::ostringstream out;
  out << "fgemm_int8_" << kernel_function(scaling) << "_" << dtype_name(input) << "_k" << cols;
  if (scaling == Int8Scaling::Group) out << "_g" << group_cols;
  out << (vectorized ? "_vec" : "_scalar");
  return out.str();
}

jit::KernelSpec quantize_int8_kernel_spec(const Int8QuantizeKernel& kernel) {
  std::ostringstream call;
  call << "fgemm::quant::" << kernel_function(kernel.scaling) << "<fgemm::quant::" << kernel_input_type(kernel.input)
       << ", fgemm::quant::Int8, " << kernel.cols << ", ";
  if (kernel.scaling == Int8Scaling::Group) call << kernel.group_cols << ", ";
  call << cpp_bool(kernel.vectorized) << ">(params)";
  const std::string symbol = std::string("fgemm_int8_") + kernel_function(kernel.scaling);
  // A whole row's slices stay in registers. One CTA per SM keeps enough loads in flight; left to itself, ptxas
  // holds a thread to 80 registers (three CTAs per SM) and spills where its slices need a few more (four of FP32).
  const int min_ctas_per_sm = kernel.scaling == Int8Scaling::Row ? 1 : 0;
  return quantize_kernel_source(kernel.name(), symbol.c_str(), {"fgemm/quantize.cuh", "fgemm/quantize_int8.cuh"},
                                "QuantizeParams", call.str(), min_ctas_per_sm);
}

void quantize_int8(const detail::Int8QuantizeProblem& p, Stream stream) {
  const detail::Int8QuantizerNames names = detail::names_of(p.quantizer);
  const jit::Dim3 grid = quantize_grid(ctas_of(p), p.groups, p.rows, p.cols, names.op, names.input);
  const Int8QuantizeKernel spec{
      p.scaling(), p.input, p.cols, p.group_cols,
      can_vectorize(p.input, p.groups, p.rows, p.cols, p.x, p.q.data, p.q.row_stride, p.q.group_stride)};
  quant::QuantizeParams params{kernel_stack(p.x, static_cast<const std::uint8_t*>(p.x.data)),
                               kernel_stack(p.q, reinterpret_cast<std::uint8_t*>(p.q.data)),
                               kernel_stack(p.sf, p.sf.data), static_cast<std::uint32_t>(p.rows)};
  launch_quantize_kernel(p.device.index, spec.name(), [&spec] { return quantize_int8_kernel_spec(spec); }, grid,
                         &params, stream);
}

}  // namespace fgemm::cuda
