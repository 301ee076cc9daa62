#include "cpu/isa.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "fgemm/error.hpp"

namespace fgemm::cpu {
namespace {

constexpr const char* kEnvironmentVariable = "FGEMM_CPU_ISA";

// Linux hands a process the (8 KiB) AMX tile state only when asked: without it, the first tile
// instruction faults. The answer holds for the whole process, so it is asked once.
bool amx_permitted() {
  static const bool permitted = [] {
    constexpr long kArchRequestXcompPermission = 0x1023;  // ARCH_REQ_XCOMP_PERM
    constexpr long kXfeatureTileData = 18;                // XFEATURE_XTILEDATA
    return syscall(SYS_arch_prctl, kArchRequestXcompPermission, kXfeatureTileData) == 0;
  }();
  return permitted;
}

std::string names_of(bool (*included)(Isa)) {
  std::string names;
  for (Isa isa : kAllIsas)
    if (included(isa)) names += std::string(names.empty() ? "" : ", ") + isa_name(isa);
  return names;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
    case Isa::Avx512Bf16: return "avx512_bf16";
    case Isa::AmxBf16: return "amx_bf16";
  }
  return "unknown";
}

bool cpu_supports(Isa isa) {
  // __builtin_cpu_supports also checks that the operating system saves the wider registers.
  switch (isa) {
    case Isa::Scalar: return true;
    case Isa::Avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::Avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma");
    case Isa::Avx512Bf16: return cpu_supports(Isa::Avx512) && __builtin_cpu_supports("avx512bf16");
    case Isa::AmxBf16:
      return cpu_supports(Isa::Avx512Bf16) && __builtin_cpu_supports("amx-tile") &&
             __builtin_cpu_supports("amx-bf16") && amx_permitted();
  }
  return false;
}

const char* isa_name(Int8Isa isa) {
  switch (isa) {
    case Int8Isa::Scalar: return "scalar";
    case Int8Isa::Avx2: return "avx2";
    case Int8Isa::Avx512Vnni: return "avx512_vnni";
    case Int8Isa::AmxInt8: return "amx_int8";
  }
  return "unknown";
}

bool cpu_supports(Int8Isa isa) {
  switch (isa) {
    case Int8Isa::Scalar: return true;
    case Int8Isa::Avx2: return cpu_supports(Isa::Avx2);
    case Int8Isa::Avx512Vnni: return cpu_supports(Isa::Avx512) && __builtin_cpu_supports("avx512vnni");
    case Int8Isa::AmxInt8:
      return cpu_supports(Int8Isa::Avx512Vnni) && __builtin_cpu_supports("amx-tile") &&
             __builtin_cpu_supports("amx-int8") && amx_permitted();
  }
  return false;
}

Isa resolve_isa(const char* requested, bool (*supported)(Isa)) {
  if (requested == nullptr || *requested == '\0') {
    for (Isa isa : kAllIsas)
      if (supported(isa)) return isa;
    return Isa::Scalar;
  }
  for (Isa isa : kAllIsas) {
    if (std::strcmp(requested, isa_name(isa)) != 0) continue;
    if (!supported(isa))
      throw Error(ErrorKind::Unsupported,
                  std::string("fgemm: ") + kEnvironmentVariable + "=" + requested +
                      " asks for an instruction set this CPU lacks; it supports: " + names_of(supported));
    return isa;
  }
  throw Error(ErrorKind::InvalidValue, std::string("fgemm: ") + kEnvironmentVariable + "=" + requested +
                                           " is not one of: " + names_of([](Isa) { return true; }));
}

Isa selected_isa() { return resolve_isa(std::getenv(kEnvironmentVariable), cpu_supports); }

}  // namespace fgemm::cpu
