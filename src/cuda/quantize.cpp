#include "cuda/quantize.hpp"

#include <cstdint>
#include <sstream>

#include "cuda/quantize_launch.hpp"
#include "fgemm/common.cuh"
#include "fgemm/quantize_params.cuh"

namespace fgemm::cuda {
namespace {

using quant::kBlock;
using quant::kColsPerWarp;
using quant::kScaleTile;
using quant::kWarpsPerCta;

constexpr const char* kPerTokenSymbol = "fgemm_per_token_cast";
constexpr const char* kPerBlockSymbol = "fgemm_per_block_cast";
constexpr const char* kCopyScalesSymbol = "fgemm_copy_scales";

jit::Dim3 fp8_quantize_grid(const detail::QuantizeProblem& p) {
  const bool per_token = p.block == detail::ScaleBlock::Token;
  const std::int64_t ctas = per_token ? ceil_div(p.rows * ceil_div(p.cols, kColsPerWarp), kWarpsPerCta)
                                      : ceil_div(p.rows, kBlock) * p.col_blocks();
  return quantize_grid(ctas, p.groups, p.rows, p.cols, per_token ? "per_token_cast_to_fp8" : "per_block_cast_to_fp8",
                       per_token ? "x" : "w");
}

}  // namespace

std::string QuantizeKernel::name() const {
  std::ostringstream out;
  out << (block == detail::ScaleBlock::Token ? "fgemm_per_token_cast_" : "fgemm_per_block_cast_") << dtype_name(input)
      << "_k" << cols << (vectorized ? "_vec" : "_scalar") << (use_ue8m0 ? "_ue8m0" : "");
  return out.str();
}

jit::KernelSpec quantize_kernel_spec(const QuantizeKernel& kernel) {
  const bool per_token = kernel.block == detail::ScaleBlock::Token;
  std::ostringstream call;
  call << "fgemm::quant::" << (per_token ? "per_token_group_cast" : "per_block_cast") << "<fgemm::quant::"
       << kernel_input_type(kernel.input) << ", fgemm::quant::E4m3<" << cpp_bool(kernel.use_ue8m0) << ">, "
       << kernel.cols << (per_token ? ", fgemm::quant::kBlock, " : ", ") << cpp_bool(kernel.vectorized)
       << ">(params)";
  return quantize_kernel_source(kernel.name(), per_token ? kPerTokenSymbol : kPerBlockSymbol,
                                {"fgemm/quantize.cuh", "fgemm/quantize_e4m3.cuh"}, "QuantizeParams", call.str());
}

jit::KernelSpec copy_scales_kernel_spec() {
  return quantize_kernel_source(kCopyScalesSymbol, kCopyScalesSymbol, {"fgemm/quantize.cuh"}, "ScaleCopyParams",
                                "fgemm::quant::copy_scales(params)");
}

void quantize(const detail::QuantizeProblem& p, Stream stream) {
  const jit::Dim3 grid = fp8_quantize_grid(p);
  const QuantizeKernel spec{p.block, p.input, p.cols, p.use_ue8m0,
                            can_vectorize(p.input, p.groups, p.rows, p.cols, p.x, p.q.data, p.q.row_stride,
                                          p.q.group_stride)};
  quant::QuantizeParams params{kernel_stack(p.x, static_cast<const std::uint8_t*>(p.x.data)),
                               kernel_stack(p.q, p.q.data), kernel_stack(p.sf, p.sf.data),
                               static_cast<std::uint32_t>(p.rows)};
  launch_quantize_kernel(p.device.index, spec.name(), [&spec] { return quantize_kernel_spec(spec); }, grid, &params,
                         stream);
}

void copy_scales(const detail::ScaleCopyProblem& p, Stream stream) {
  const std::int64_t row_tiles = ceil_div(p.rows, kScaleTile), col_tiles = ceil_div(p.cols, kScaleTile);
  if (p.rows > kMaxGridX) too_large("copy_scales", "sf", "has " + std::to_string(p.rows) + " rows");
  if (col_tiles > kMaxGridYZ) too_large("copy_scales", "sf", "has " + std::to_string(p.cols) + " columns");
  if (p.groups > kMaxGridYZ) too_large("copy_scales", "sf", "has " + std::to_string(p.groups) + " groups");
  quant::ScaleCopyParams params{kernel_stack(p.src, p.src.data), kernel_stack(p.dst, p.dst.data),
                                static_cast<std::uint32_t>(p.rows), static_cast<std::uint32_t>(p.cols)};
  const jit::Dim3 grid{static_cast<unsigned>(row_tiles), static_cast<unsigned>(col_tiles),
                       static_cast<unsigned>(p.groups)};
  launch_quantize_kernel(p.device.index, kCopyScalesSymbol, copy_scales_kernel_spec, grid, &params, stream);
}

}  // namespace fgemm::cuda
