#include "core/contiguous_layout.hpp"

namespace fgemm::detail {

void set_contiguous_layout(const Checker& check, GemmProblem& problem, const TensorView& grouped_layout,
                           ContiguousLayout form, const char* arg) {
  const auto* data = static_cast<const std::int32_t*>(grouped_layout.data);
  if (form == ContiguousLayout::Psum) {
    check.index_vector(grouped_layout, arg, problem.num_groups,
                       "[G], the prefix sums of the experts' rows (use_psum_layout)", problem.device);
    problem.psum = data;
  } else {
    check.index_vector(grouped_layout, arg, problem.m, "[M_sum], the expert of each row of a (m_indices)",
                       problem.device);
    problem.m_indices = data;
  }
}

}  // namespace fgemm::detail
