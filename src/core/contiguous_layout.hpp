// The contiguous layout's `grouped_layout` argument, in either of its forms (fgemm::ContiguousLayout): checked
// and stored in the problem.
#pragma once

#include "core/checker.hpp"
#include "core/problem.hpp"
#include "fgemm/fgemm.hpp"

namespace fgemm::detail {

// m_indices [M_sum] or psum [G], int32, contiguous, on the device of `a`; `arg` is the argument's name in
// the operation's messages.
void set_contiguous_layout(const Checker& check, GemmProblem& problem, const TensorView& grouped_layout,
                           ContiguousLayout form, const char* arg);

}  // namespace fgemm::detail
