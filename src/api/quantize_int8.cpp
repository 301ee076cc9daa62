// The public INT8 quantization operations: validate, then run on the backend of the tensors' device.
#include "api/backend.hpp"
#include "core/quantize_int8_validate.hpp"
#include "cpu/quantize_int8.hpp"
#include "cuda/quantize_int8.hpp"
#include "fgemm/quantize_int8.hpp"

namespace fgemm {
namespace {

void quantize_int8(const detail::Int8QuantizeProblem& problem, Stream stream) {
  api::run_on_backend(problem, stream, cpu::quantize_int8, cuda::quantize_int8);
}

}  // namespace

void per_token_cast_to_int8(const TensorView& x, const TensorView& x_int8, const TensorView& sf, Stream stream) {
  quantize_int8(detail::validate_quantize_int8(detail::Int8Quantizer::PerToken, x, x_int8, sf), stream);
}

void per_channel_cast_to_int8(const TensorView& w, const TensorView& w_int8, const TensorView& sf, Stream stream) {
  quantize_int8(detail::validate_quantize_int8(detail::Int8Quantizer::PerChannel, w, w_int8, sf), stream);
}

void per_token_group_cast_to_int8(const TensorView& x, const TensorView& x_int8, const TensorView& sf,
                                  std::int64_t group_size, Stream stream) {
  quantize_int8(detail::validate_quantize_int8(detail::Int8Quantizer::PerTokenGroup, x, x_int8, sf, group_size),
                stream);
}

void per_block_cast_to_int8(const TensorView& w, const TensorView& w_int8, const TensorView& sf, Stream stream) {
  quantize_int8(detail::validate_quantize_int8(detail::Int8Quantizer::PerBlock, w, w_int8, sf), stream);
}

}  // namespace fgemm
