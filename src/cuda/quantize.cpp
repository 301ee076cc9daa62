#include "cuda/quantize.hpp"

#include <cstdint>
#include <sstream>

#include "cuda/hopper_device.hpp"
#include "fgemm/common.cuh"
#include "fgemm/quantize_params.cuh"
#include "jit/kernel_cache.hpp"
#include "jit/launch.hpp"

namespace fgemm::cuda {
namespace {

using quant::kBlock;
using quant::kColsPerWarp;
using quant::kScaleTile;
using quant::kThreadsPerCta;
using quant::kWarpsPerCta;

constexpr std::int64_t kMaxGridX = 0x7fffffff;
constexpr std::int64_t kMaxGridYZ = 65535;

constexpr const char* kPerTokenSymbol = "fgemm_per_token_cast";
constexpr const char* kPerBlockSymbol = "fgemm_per_block_cast";
constexpr const char* kCopyScalesSymbol = "fgemm_copy_scales";

// The kernels' view of a validated matrix stack, `data` being its base pointer as the kernel types it.
template <typename T, typename U>
quant::Stack<T> stack(const detail::StridedStack<U>& strided, T* data) {
  return {data, strided.group_stride, strided.row_stride, strided.col_stride};
}

[[noreturn]] void too_large(const char* op, const char* arg, const std::string& what) {
  throw Error(ErrorKind::InvalidValue, std::string("fgemm.") + op + ": argument '" + arg + "' " + what +
                                           ", more than the GPU kernel's grid holds");
}

bool aligned_16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }

// Whether `stride` elements of `element_bytes` bytes step a whole number of 16-byte vectors, where the step
// is ever taken.
bool stride_keeps_16(std::int64_t stride, std::int64_t element_bytes, std::int64_t extent) {
  return extent <= 1 || stride * element_bytes % 16 == 0;
}

bool can_vectorize(const detail::QuantizeProblem& p) {
  const std::int64_t in_bytes = static_cast<std::int64_t>(dtype_size(p.input));
  return p.cols % 16 == 0 && aligned_16(p.x.data) && aligned_16(p.q.data) &&
         stride_keeps_16(p.x.row_stride, in_bytes, p.rows) && stride_keeps_16(p.x.group_stride, in_bytes, p.groups) &&
         stride_keeps_16(p.q.row_stride, 1, p.rows) && stride_keeps_16(p.q.group_stride, 1, p.groups);
}

jit::Dim3 quantize_grid(const detail::QuantizeProblem& p) {
  const bool per_token = p.block == detail::ScaleBlock::Token;
  const char* op = per_token ? "per_token_cast_to_fp8" : "per_block_cast_to_fp8";
  const char* x_arg = per_token ? "x" : "w";
  if (p.groups > kMaxGridYZ) too_large(op, x_arg, "has " + std::to_string(p.groups) + " groups");
  if (p.rows > kMaxGridX || p.cols > kMaxGridX)
    too_large(op, x_arg, "has " + std::to_string(p.rows) + " rows of " + std::to_string(p.cols) + " columns");
  const std::int64_t ctas = per_token ? ceil_div(p.rows * ceil_div(p.cols, kColsPerWarp), kWarpsPerCta)
                                      : ceil_div(p.rows, kBlock) * p.col_blocks();
  if (ctas > kMaxGridX)
    too_large(op, x_arg, "has " + std::to_string(p.rows) + " rows of " + std::to_string(p.cols) + " columns");
  return {static_cast<unsigned>(ctas), static_cast<unsigned>(p.groups), 1};
}

const char* input_type(DType input) { return input == DType::BF16 ? "Bf16" : "F32"; }

const char* cpp_bool(bool value) { return value ? "true" : "false"; }

}  // namespace

std::string QuantizeKernel::name() const {
  std::ostringstream out;
  out << (block == detail::ScaleBlock::Token ? "fgemm_per_token_cast_" : "fgemm_per_block_cast_") << dtype_name(input)
      << "_k" << cols << (vectorized ? "_vec" : "_scalar") << (use_ue8m0 ? "_ue8m0" : "");
  return out.str();
}

jit::KernelSpec quantize_kernel_spec(const QuantizeKernel& kernel) {
  const bool per_token = kernel.block == detail::ScaleBlock::Token;
  const char* symbol = per_token ? kPerTokenSymbol : kPerBlockSymbol;
  std::ostringstream source;
  source << "// " << kernel.name() << "\n"
         << "#include \"fgemm/quantize.cuh\"\n\n"
         << "extern \"C\" __global__ void __launch_bounds__(fgemm::quant::kThreadsPerCta)\n"
         << symbol << "(const fgemm::quant::QuantizeParams params) {\n"
         << "  fgemm::quant::" << (per_token ? "per_token_cast" : "per_block_cast")
         << "<fgemm::quant::" << input_type(kernel.input) << ", " << kernel.cols << ", " << cpp_bool(kernel.vectorized)
         << ", " << cpp_bool(kernel.use_ue8m0) << ">(params);\n"
         << "}\n";
  return {symbol, source.str(), 0};
}

jit::KernelSpec copy_scales_kernel_spec() {
  std::ostringstream source;
  source << "#include \"fgemm/quantize.cuh\"\n\n"
         << "extern \"C\" __global__ void __launch_bounds__(fgemm::quant::kThreadsPerCta)\n"
         << kCopyScalesSymbol << "(const fgemm::quant::ScaleCopyParams params) {\n"
         << "  fgemm::quant::copy_scales(params);\n"
         << "}\n";
  return {kCopyScalesSymbol, source.str(), 0};
}

void quantize(const detail::QuantizeProblem& p, Stream stream) {
  const jit::Dim3 grid = quantize_grid(p);
  const int device = p.device.index;
  use_hopper_device(device);
  const QuantizeKernel spec{p.block, p.input, p.cols, p.use_ue8m0, can_vectorize(p)};
  const jit::Kernel& kernel = jit::get_kernel(device, spec.name(), [&spec] { return quantize_kernel_spec(spec); });
  quant::QuantizeParams params{stack(p.x, static_cast<const std::uint8_t*>(p.x.data)), stack(p.q, p.q.data),
                               stack(p.sf, p.sf.data), static_cast<std::uint32_t>(p.rows)};
  void* args[] = {&params};
  jit::launch(kernel, jit::LaunchShape{grid, {kThreadsPerCta, 1, 1}, {1, 1, 1}}, args,
              static_cast<driver::CUstream>(stream));
}

void copy_scales(const detail::ScaleCopyProblem& p, Stream stream) {
  const std::int64_t row_tiles = ceil_div(p.rows, kScaleTile), col_tiles = ceil_div(p.cols, kScaleTile);
  if (p.rows > kMaxGridX) too_large("copy_scales", "sf", "has " + std::to_string(p.rows) + " rows");
  if (col_tiles > kMaxGridYZ) too_large("copy_scales", "sf", "has " + std::to_string(p.cols) + " columns");
  if (p.groups > kMaxGridYZ) too_large("copy_scales", "sf", "has " + std::to_string(p.groups) + " groups");
  const int device = p.device.index;
  use_hopper_device(device);
  const jit::Kernel& kernel = jit::get_kernel(device, kCopyScalesSymbol, copy_scales_kernel_spec);
  quant::ScaleCopyParams params{stack(p.src, p.src.data), stack(p.dst, p.dst.data), static_cast<std::uint32_t>(p.rows),
                                static_cast<std::uint32_t>(p.cols)};
  void* args[] = {&params};
  const jit::Dim3 grid{static_cast<unsigned>(row_tiles), static_cast<unsigned>(col_tiles),
                       static_cast<unsigned>(p.groups)};
  jit::launch(kernel, jit::LaunchShape{grid, {kThreadsPerCta, 1, 1}, {1, 1, 1}}, args,
              static_cast<driver::CUstream>(stream));
}

}  // namespace fgemm::cuda
