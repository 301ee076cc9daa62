#include "cuda/stream_order.hpp"

#include "core/settings.hpp"

namespace fgemm::cuda {

jit::StreamOrder kernel_stream_order() {
  return detail::programmatic_dependent_launch() ? jit::StreamOrder::OverlapPrevious
                                                 : jit::StreamOrder::AfterPrevious;
}

}  // namespace fgemm::cuda
