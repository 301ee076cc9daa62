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

// The INT8 GEMM's kernel sets (int8_kernel_set.hpp). FGEMM_CPU_ISA names an Isa, which int8_gemm.hpp maps to
// one of these.
enum class Int8Isa {
  Scalar,      // portable C++
  Avx2,        // AVX2: values widened to 16 bits, products summed in pairs (vpmaddwd)
  Avx512Vnni,  // AVX-512 F/BW/VL + VNNI: four products summed at once (vpdpbusd)
  AmxInt8,     // the above, with the blocked path's products on AMX tiles (TDPBSSD)
};

constexpr Int8Isa kAllInt8Isas[] = {Int8Isa::AmxInt8, Int8Isa::Avx512Vnni, Int8Isa::Avx2, Int8Isa::Scalar};

// amx_int8, avx512_vnni, avx2, scalar.
const char* isa_name(Int8Isa isa);

// As cpu_supports(Isa), for the INT8 kernel sets.
bool cpu_supports(Int8Isa isa);

}  // namespace fgemm::cpu
