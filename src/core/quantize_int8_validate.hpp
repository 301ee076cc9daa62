// Argument checking of the INT8 quantization operations (include/fgemm/quantize_int8.hpp).
#pragma once

#include <cstdint>

#include "core/quantize_int8_problem.hpp"
#include "fgemm/tensor.hpp"

namespace fgemm::detail {

// The group sizes per_token_group_cast_to_int8 takes.
bool is_int8_group_size(std::int64_t group_size);

// `x` is the quantizer's input (x or w), `codes` its INT8 output (x_int8 or w_int8), `sf` its scales;
// `group_size` counts for PerTokenGroup alone.
Int8QuantizeProblem validate_quantize_int8(Int8Quantizer quantizer, const TensorView& x, const TensorView& codes,
                                           const TensorView& sf, std::int64_t group_size = 128);

}  // namespace fgemm::detail
