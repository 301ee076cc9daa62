// The instruction sets the CPU backend has kernels for, and which one a call runs.
#pragma once

namespace fgemm::cpu {

enum class Isa {
  Scalar,      // portable C++
  Avx2,        // AVX2 + FMA, FP32 products
  Avx512,      // AVX-512 F/BW/VL, FP32 products
  Avx512Bf16,  // AVX-512 F/BW/VL + BF16 dot products (E4M3 is exact in BF16; sums stay FP32)
  AmxBf16,     // the above, with the blocked path's products on AMX tiles (BF16 in, FP32 sums)
};

constexpr Isa kAllIsas[] = {Isa::AmxBf16, Isa::Avx512Bf16, Isa::Avx512, Isa::Avx2, Isa::Scalar};  // best first

// The name FGEMM_CPU_ISA uses: amx_bf16, avx512_bf16, avx512, avx2, scalar.
const char* isa_name(Isa isa);

// Whether this CPU, and for AMX the operating system, lets the process run the set's kernels. For AMX the
// first call asks Linux for the tile state (arch_prctl), which a process must do before using tiles.
bool cpu_supports(Isa isa);

// What FGEMM_CPU_ISA asks for: `requested` (its value; null or empty when unset) on a CPU that supports the
// instruction sets for which `supported` returns true. Unset means the best supported one; a value that
// names no instruction set, or one the CPU lacks, throws fgemm::Error.
Isa resolve_isa(const char* requested, bool (*supported)(Isa));

// The instruction set a call runs now: resolve_isa with the environment and this CPU.
Isa selected_isa();

}  // namespace fgemm::cpu
