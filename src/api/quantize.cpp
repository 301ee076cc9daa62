// The public quantization operations: validate, then run on the backend of the tensors' device.
#include "api/backend.hpp"
#include "core/quantize_validate.hpp"
#include "cpu/quantize.hpp"
#include "cuda/quantize.hpp"
#include "fgemm/quantize.hpp"

namespace fgemm {
namespace {

void quantize(const detail::QuantizeProblem& problem, Stream stream) {
  api::run_on_backend(problem, stream, cpu::quantize, cuda::quantize);
}

}  // namespace

void per_token_cast_to_fp8(const TensorView& x, const TensorView& x_fp8, const TensorView& sf, bool use_ue8m0,
                           Stream stream) {
  quantize(detail::validate_quantize(detail::ScaleBlock::Token, x, x_fp8, sf, use_ue8m0), stream);
}

void per_block_cast_to_fp8(const TensorView& w, const TensorView& w_fp8, const TensorView& sf, bool use_ue8m0,
                           Stream stream) {
  quantize(detail::validate_quantize(detail::ScaleBlock::Block, w, w_fp8, sf, use_ue8m0), stream);
}

void copy_scales(const TensorView& sf, const TensorView& out, Stream stream) {
  api::run_on_backend(detail::validate_copy_scales(sf, out), stream, cpu::copy_scales, cuda::copy_scales);
}

}  // namespace fgemm
