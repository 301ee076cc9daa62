// Argument checking of the cast-transpose quantizers (include/fgemm/quantize.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "core/quantize_problem.hpp"
#include "fgemm/tensor.hpp"

namespace fgemm::detail {

// cast_transpose_to_fp8: x [M, K] -> x_fp8 [M, K], sf [M, ceil(K/128)], xt_fp8 [K, M], sft [K, ceil(M/128)].
CastTransposeProblem validate_cast_transpose(const TensorView& x, const TensorView& x_fp8, const TensorView& sf,
                                             const TensorView& xt_fp8, const TensorView& sft, bool use_ue8m0);

// per_block_cast_transpose_to_fp8: x [N, K] -> x_fp8 [N, K], sf [ceil(N/128), ceil(K/128)], xt_fp8 [K, N],
// sft [ceil(K/128), ceil(N/128)]; or a stack of them, each with a leading G.
CastTransposeProblem validate_per_block_cast_transpose(const TensorView& x, const TensorView& x_fp8,
                                                       const TensorView& sf, const TensorView& xt_fp8,
                                                       const TensorView& sft, bool use_ue8m0);

// grouped_cast_transpose_to_fp8: x [sum(ks), H] -> x_fp8 [sum(ks), H], sf [sum(ks), ceil(H/128)], xt_fp8 flat
// [sum(ks) * H] (expert g's [H, ks[g]] block at sum(ks[:g]) * H), sft [H, sum(ks)/128].
CastTransposeProblem validate_grouped_cast_transpose(const TensorView& x, const std::vector<std::int64_t>& ks,
                                                     const TensorView& x_fp8, const TensorView& sf,
                                                     const TensorView& xt_fp8, const TensorView& sft, bool use_ue8m0);

}  // namespace fgemm::detail
