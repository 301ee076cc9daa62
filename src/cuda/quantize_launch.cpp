#include "cuda/quantize_launch.hpp"

#include <sstream>

#include "cuda/hopper_device.hpp"
#include "cuda/stream_order.hpp"
#include "fgemm/error.hpp"
#include "jit/kernel_cache.hpp"

namespace fgemm::cuda {
namespace {

bool aligned_16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }

// Whether `stride` elements of `element_bytes` bytes step a whole number of 16-byte vectors, where the step
// is ever taken.
bool stride_keeps_16(std::int64_t stride, std::int64_t element_bytes, std::int64_t extent) {
  return extent <= 1 || stride * element_bytes % 16 == 0;
}

}  // namespace

void too_large(const char* op, const char* arg, const std::string& what) {
  throw Error(ErrorKind::InvalidValue, std::string("fgemm.") + op + ": argument '" + arg + "' " + what +
                                           ", more than the GPU kernel's grid holds");
}

jit::Dim3 quantize_grid(std::int64_t ctas, std::int64_t groups, std::int64_t rows, std::int64_t cols, const char* op,
                        const char* arg) {
  if (groups > kMaxGridYZ) too_large(op, arg, "has " + std::to_string(groups) + " groups");
  if (rows > kMaxGridX || cols > kMaxGridX || ctas > kMaxGridX)
    too_large(op, arg, "has " + std::to_string(rows) + " rows of " + std::to_string(cols) + " columns");
  return {static_cast<unsigned>(ctas), static_cast<unsigned>(groups), 1};
}

bool can_vectorize(DType input, std::int64_t groups, std::int64_t rows, std::int64_t cols,
                   const detail::StridedStack<const void>& x, const void* codes, std::int64_t codes_row_stride,
                   std::int64_t codes_group_stride) {
  const std::int64_t in_bytes = static_cast<std::int64_t>(dtype_size(input));
  return cols % 16 == 0 && aligned_16(x.data) && aligned_16(codes) && stride_keeps_16(x.row_stride, in_bytes, rows) &&
         stride_keeps_16(x.group_stride, in_bytes, groups) && stride_keeps_16(codes_row_stride, 1, rows) &&
         stride_keeps_16(codes_group_stride, 1, groups);
}

const char* kernel_input_type(DType input) {
  switch (input) {
    case DType::BF16: return "Bf16";
    case DType::F16: return "F16";
    default: return "F32";
  }
}

const char* cpp_bool(bool value) { return value ? "true" : "false"; }

jit::KernelSpec quantize_kernel_source(const std::string& name, const char* symbol,
                                       std::initializer_list<const char*> headers, const char* params_type,
                                       const std::string& call, int min_ctas_per_sm) {
  std::ostringstream source;
  source << "// " << name << "\n#include \"fgemm/ptx.cuh\"\n";
  for (const char* header : headers) source << "#include \"" << header << "\"\n";
  source << "\nextern \"C\" __global__ void __launch_bounds__(fgemm::quant::kThreadsPerCta";
  if (min_ctas_per_sm > 0) source << ", " << min_ctas_per_sm;
  source << ")\n"
         << symbol << "(const fgemm::quant::" << params_type << " params) {\n"
         // Launched to overlap the previous kernel of the stream (fgemm::set_pdl), the kernel reads nothing
         // before that kernel completes; the next kernel may then start its prologue on the SMs this one leaves
         // (it waits for this one's completion before it touches memory).
         << "  fgemm::ptx::wait_for_previous_grid();\n"
         << "  fgemm::ptx::allow_next_grid();\n"
         << "  " << call << ";\n"
         << "}\n";
  return {symbol, source.str(), 0};
}

void launch_quantize_kernel(int device, const std::string& name, const std::function<jit::KernelSpec()>& make_spec,
                            const jit::Dim3& grid, void* params, Stream stream) {
  use_hopper_device(device);
  const jit::Kernel& kernel = jit::get_kernel(device, name, make_spec);
  void* args[] = {params};
  jit::launch(kernel, jit::LaunchShape{grid, {quant::kThreadsPerCta, 1, 1}, {1, 1, 1}}, args,
              static_cast<driver::CUstream>(stream), kernel_stream_order());
}

}  // namespace fgemm::cuda
