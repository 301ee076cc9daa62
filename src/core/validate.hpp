// Argument checking for every public operation (docs/ARCHITECTURE.md, Semantics): the one place the contract is
// enforced.
#pragma once

#include <optional>

#include "core/problem.hpp"
#include "fgemm/tensor.hpp"

namespace fgemm::detail {

GemmProblem validate_normal(const TensorView& a, const TensorView& sfa, const TensorView& b,
                            const TensorView& sfb, const TensorView& d, const std::optional<TensorView>& c);

GemmProblem validate_contiguous(const TensorView& a, const TensorView& sfa, const TensorView& b,
                                const TensorView& sfb, const TensorView& d, const TensorView& m_indices);

GemmProblem validate_masked(const TensorView& a, const TensorView& sfa, const TensorView& b,
                            const TensorView& sfb, const TensorView& d, const TensorView& masked_m,
                            std::int64_t expected_m);

}  // namespace fgemm::detail
