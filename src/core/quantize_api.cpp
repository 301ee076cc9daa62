// The quantization operations: validate, then hand the call to the backend of the tensors' device.
#include "core/quantize_validate.hpp"
#include "cpu/quantize.hpp"
#include "cuda/quantize.hpp"
#include "fgemm/quantize.hpp"

namespace fgemm {
namespace {

void run(const detail::QuantizeProblem& problem, Stream stream) {
  if (problem.empty()) return;
  if (problem.device.type == DeviceType::CPU)
    cpu::quantize(problem);
  else
    cuda::quantize(problem, stream);
}

}  // namespace

void per_token_cast_to_fp8(const TensorView& x, const TensorView& x_fp8, const TensorView& sf, bool use_ue8m0,
                           Stream stream) {
  run(detail::validate_quantize(detail::ScaleBlock::Token, x, x_fp8, sf, use_ue8m0), stream);
}

void per_block_cast_to_fp8(const TensorView& w, const TensorView& w_fp8, const TensorView& sf, bool use_ue8m0,
                           Stream stream) {
  run(detail::validate_quantize(detail::ScaleBlock::Block, w, w_fp8, sf, use_ue8m0), stream);
}

void copy_scales(const TensorView& sf, const TensorView& out, Stream stream) {
  const detail::ScaleCopyProblem problem = detail::validate_copy_scales(sf, out);
  if (problem.empty()) return;
  if (problem.device.type == DeviceType::CPU)
    cpu::copy_scales(problem);
  else
    cuda::copy_scales(problem, stream);
}

}  // namespace fgemm
