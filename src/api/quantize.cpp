// The public quantization operations: validate, then run on the backend of the tensors' device.
#include "api/backend.hpp"
#include "core/cast_transpose_validate.hpp"
#include "core/quantize_validate.hpp"
#include "cpu/cast_transpose.hpp"
#include "cpu/quantize.hpp"
#include "cuda/cast_transpose.hpp"
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

void cast_transpose_to_fp8(const TensorView& x, const TensorView& x_fp8, const TensorView& sf,
                           const TensorView& xt_fp8, const TensorView& sft, bool use_ue8m0, Stream stream) {
  api::run_on_backend(detail::validate_cast_transpose(x, x_fp8, sf, xt_fp8, sft, use_ue8m0), stream,
                      cpu::cast_transpose, cuda::cast_transpose);
}

void per_block_cast_transpose_to_fp8(const TensorView& x, const TensorView& x_fp8, const TensorView& sf,
                                     const TensorView& xt_fp8, const TensorView& sft, bool use_ue8m0, Stream stream) {
  api::run_on_backend(detail::validate_per_block_cast_transpose(x, x_fp8, sf, xt_fp8, sft, use_ue8m0), stream,
                      cpu::cast_transpose, cuda::cast_transpose);
}

void grouped_cast_transpose_to_fp8(const TensorView& x, const std::vector<std::int64_t>& ks, const TensorView& x_fp8,
                                   const TensorView& sf, const TensorView& xt_fp8, const TensorView& sft,
                                   bool use_ue8m0, Stream stream) {
  api::run_on_backend(detail::validate_grouped_cast_transpose(x, ks, x_fp8, sf, xt_fp8, sft, use_ue8m0), stream,
                      cpu::cast_transpose, cuda::cast_transpose);
}

void copy_scales(const TensorView& sf, const TensorView& out, Stream stream) {
  api::run_on_backend(detail::validate_copy_scales(sf, out), stream, cpu::copy_scales, cuda::copy_scales);
}

}  // namespace fgemm
