// Argument checking of the quantization operations (include/fgemm/quantize.hpp).
#pragma once

#include "core/quantize_problem.hpp"
#include "fgemm/tensor.hpp"

namespace fgemm::detail {

// per_token_cast_to_fp8 (block Token: x, x_fp8, sf) and per_block_cast_to_fp8 (block Block: w, w_fp8, sf).
QuantizeProblem validate_quantize(ScaleBlock block, const TensorView& x, const TensorView& x_fp8, const TensorView& sf,
                                  bool use_ue8m0);

ScaleCopyProblem validate_copy_scales(const TensorView& sf, const TensorView& out);

}  // namespace fgemm::detail
