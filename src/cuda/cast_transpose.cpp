#include "cuda/cast_transpose.hpp"

#include <algorithm>
#include <cstdint>
#include <sstream>

#include "cuda/quantize_launch.hpp"
#include "fgemm/common.cuh"
#include "fgemm/quantize_params.cuh"

namespace fgemm::cuda {
namespace {

using quant::kBlock;
using quant::kMaxBandsPerLaunch;

constexpr const char* kSymbol = "fgemm_cast_transpose";

bool multiple_of_16(std::int64_t value) { return value % 16 == 0; }

bool transposed_can_vectorize(const detail::CastTransposeProblem& p) {
  if (reinterpret_cast<std::uintptr_t>(p.qt) % 16 != 0 || !multiple_of_16(p.rows)) return false;
  if (p.groups > 1 && !multiple_of_16(p.qt_group_stride)) return false;
  return std::all_of(p.bands.begin(), p.bands.end(), [&p](const detail::TransposedBand& band) {
    return multiple_of_16(band.offset) && (p.cols <= 1 || multiple_of_16(band.row_stride));
  });
}

}  // namespace

std::string CastTransposeKernel::name() const {
  std::ostringstream out;
  out << kSymbol << "_" << dtype_name(input) << "_k" << cols << (vectorized ? "_vec" : "_scalar")
      << (transposed_vectorized ? "_tvec" : "_tscalar") << (use_ue8m0 ? "_ue8m0" : "")
      << (block_scaled ? "_block" : "");
  return out.str();
}

jit::KernelSpec cast_transpose_kernel_spec(const CastTransposeKernel& kernel) {
  std::ostringstream call;
  call << "fgemm::quant::cast_transpose<fgemm::quant::" << kernel_input_type(kernel.input) << ", fgemm::quant::E4m3<"
       << cpp_bool(kernel.use_ue8m0) << ">, " << kernel.cols << ", " << cpp_bool(kernel.vectorized) << ", "
       << cpp_bool(kernel.transposed_vectorized) << ", " << cpp_bool(kernel.block_scaled) << ">(params)";
  return quantize_kernel_source(kernel.name(), kSymbol, {"fgemm/cast_transpose.cuh", "fgemm/quantize_e4m3.cuh"},
                                "CastTransposeParams", call.str());
}

void cast_transpose(const detail::CastTransposeProblem& p, Stream stream) {
  const char* op = p.block == detail::ScaleBlock::Block ? "per_block_cast_transpose_to_fp8"
                   : p.grouped                          ? "grouped_cast_transpose_to_fp8"
                                                        : "cast_transpose_to_fp8";
  const std::int64_t col_blocks = p.col_blocks();
  // Throws where the problem is too large.
  quantize_grid(p.row_blocks() * col_blocks, p.groups, p.rows, p.cols, op, "x");
  const CastTransposeKernel spec{p.input, p.cols, p.use_ue8m0,
                                 can_vectorize(p.input, p.groups, p.rows, p.cols, p.x, p.q.data, p.q.row_stride,
                                               p.q.group_stride),
                                 transposed_can_vectorize(p), p.block == detail::ScaleBlock::Block};
  quant::CastTransposeParams params{};
  params.x = kernel_stack(p.x, static_cast<const std::uint8_t*>(p.x.data));
  params.q = kernel_stack(p.q, p.q.data);
  params.sf = kernel_stack(p.sf, p.sf.data);
  params.sft = kernel_stack(p.sft, p.sft.data);
  params.qt = p.qt;
  params.qt_group_stride = p.qt_group_stride;
  params.rows = static_cast<std::uint32_t>(p.rows);
  // One launch per kMaxBandsPerLaunch bands, over the row blocks they cover.
  const auto u32 = [](std::int64_t value) { return static_cast<std::uint32_t>(value); };
  for (std::size_t first = 0; first < p.bands.size(); first += kMaxBandsPerLaunch) {
    const std::size_t count = std::min<std::size_t>(kMaxBandsPerLaunch, p.bands.size() - first);
    for (std::size_t b = 0; b < count; ++b) {
      const detail::TransposedBand& band = p.bands[first + b];
      params.band[b] = {u32(band.first_row), u32(band.rows), band.offset, band.row_stride, u32(band.x_first_row),
                        u32(band.x_rows)};
    }
    params.bands = static_cast<std::uint32_t>(count);
    const detail::TransposedBand& last = p.bands[first + count - 1];
    const std::int64_t first_row_block = p.bands[first].first_row / kBlock;
    const std::int64_t row_blocks = ceil_div(last.first_row + last.rows, kBlock) - first_row_block;
    params.first_row_block = static_cast<std::uint32_t>(first_row_block);
    const jit::Dim3 grid = quantize_grid(row_blocks * col_blocks, p.groups, p.rows, p.cols, op, "x");
    launch_quantize_kernel(p.device.index, spec.name(), [&spec] { return cast_transpose_kernel_spec(spec); }, grid,
                           &params, stream);
  }
}

}  // namespace fgemm::cuda
