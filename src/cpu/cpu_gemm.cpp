#include "cpu/cpu_gemm.hpp"

#include "cpu/blocked_gemm.hpp"
#include "cpu/isa.hpp"
#include "cpu/kernel_set.hpp"
#include "cpu/row_blocks.hpp"

namespace fgemm::cpu {
namespace {

const KernelSet& kernels_for(Isa isa) {
  switch (isa) {
    case Isa::Avx512Bf16: return kAvx512Bf16Kernels;
    case Isa::Avx512: return kAvx512Kernels;
    case Isa::Avx2: return kAvx2Kernels;
    case Isa::Scalar: break;
  }
  return kScalarKernels;
}

}  // namespace

void gemm(const detail::GemmProblem& problem) {
  const KernelSet& kernels = kernels_for(selected_isa());
  blocked_gemm(problem, make_row_blocks(problem), kernels);
}

}  // namespace fgemm::cpu
