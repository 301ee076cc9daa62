#include "cpu/int8_gemm.hpp"

#include "cpu/int8_blocked_gemm.hpp"
#include "cpu/int8_epilogue.hpp"
#include "cpu/int8_packed_a.hpp"
#include "cpu/row_blocks.hpp"
#include "cpu/scratch_buffer.hpp"

namespace fgemm::cpu {

// FGEMM_CPU_ISA chooses among the sets of the FP8 and 16-bit GEMMs; an INT8 problem runs the INT8 set of the
// same family, the best the CPU has of it:
//   amx_bf16                  AMX-INT8 where the CPU has it (an AMX-BF16 CPU need not), else as avx512
//   avx512_bf16, avx512       AVX-512 VNNI where the CPU has it, else AVX2 (the AVX-512 CPUs without VNNI,
//                             Skylake-SP, run the AVX2 set)
//   avx2                      AVX2
//   scalar                    scalar
Int8Isa int8_isa_for(Isa isa) {
  switch (isa) {
    case Isa::AmxBf16:
      if (cpu_supports(Int8Isa::AmxInt8)) return Int8Isa::AmxInt8;
      [[fallthrough]];
    case Isa::Avx512Bf16:
    case Isa::Avx512:
      if (cpu_supports(Int8Isa::Avx512Vnni)) return Int8Isa::Avx512Vnni;
      return Int8Isa::Avx2;
    case Isa::Avx2: return Int8Isa::Avx2;
    case Isa::Scalar: break;
  }
  return Int8Isa::Scalar;
}

const Int8KernelSet& int8_kernels_for(Int8Isa isa) {
  switch (isa) {
    case Int8Isa::AmxInt8: return kAmxInt8Kernels;
    case Int8Isa::Avx512Vnni: return kAvx512VnniInt8Kernels;
    case Int8Isa::Avx2: return kAvx2Int8Kernels;
    case Int8Isa::Scalar: break;
  }
  return kScalarInt8Kernels;
}

void int8_gemm(const detail::GemmProblem& problem, Int8Isa isa) {
  const Int8KernelSet& kernels = int8_kernels_for(isa);
  const std::vector<RowBlock> blocks = make_row_blocks(problem);
  if (blocks.empty()) return;  // every row is padding or masked off
  // The storage of the calling thread's last call is kept, so that calls of similar sizes allocate nothing.
  thread_local ScratchBuffer packed_a_storage, bias_storage;
  const Int8PackedA packed_a(problem, blocks, kernels, packed_a_storage);
  int8_blocked_gemm(problem, blocks, packed_a, kernels, bias_in_fp32(problem, bias_storage));
}

void int8_gemm(const detail::GemmProblem& problem) { int8_gemm(problem, int8_isa_for(selected_isa())); }

}  // namespace fgemm::cpu
