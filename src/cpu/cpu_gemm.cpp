#include "cpu/cpu_gemm.hpp"

#include "fgemm/error.hpp"

namespace fgemm::cpu {

void gemm(const detail::GemmProblem&) {
  throw Error(ErrorKind::Unsupported, "fgemm: the CPU backend is being written");
}

}  // namespace fgemm::cpu
