#include "cpu/cpu_gemm.hpp"

#include "cpu/blocked_gemm.hpp"
#include "cpu/direct_gemm.hpp"
#include "cpu/packed_a.hpp"
#include "cpu/row_blocks.hpp"
#include "cpu/scratch_buffer.hpp"

namespace fgemm::cpu {

const KernelSet& kernels_for(Isa isa) {
  switch (isa) {
    case Isa::AmxBf16: return kAmxBf16Kernels;
    case Isa::Avx512Bf16: return kAvx512Bf16Kernels;
    case Isa::Avx512: return kAvx512Kernels;
    case Isa::Avx2: return kAvx2Kernels;
    case Isa::Scalar: break;
  }
  return kScalarKernels;
}

void gemm(const detail::GemmProblem& problem) {
  const KernelSet& kernels = kernels_for(selected_isa());
  std::vector<RowBlock> few_rows, many_rows;
  for (const RowBlock& block : make_row_blocks(problem))
    (block.rows <= kernels.max_direct_rows ? few_rows : many_rows).push_back(block);
  // The packed A of the calling thread's last call is kept, so that calls of similar sizes allocate nothing.
  thread_local ScratchBuffer few_rows_a, many_rows_a;
  if (!few_rows.empty()) direct_gemm(problem, few_rows, PackedA(problem, few_rows, kernels, few_rows_a), kernels);
  if (!many_rows.empty()) blocked_gemm(problem, many_rows, PackedA(problem, many_rows, kernels, many_rows_a), kernels);
}

}  // namespace fgemm::cpu
