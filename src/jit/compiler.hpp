// Compiling a kernel for sm_90a into a cubin, with NVRTC (in process) or nvcc (a child process).
#pragma once

#include <string>
#include <vector>

#include "jit/embedded_kernels.hpp"
#include "jit/kernel_spec.hpp"
#include "jit/ptxas_stats.hpp"

namespace fgemm::jit {

enum class Compiler { Nvrtc, Nvcc };

const char* to_string(Compiler compiler);

// FGEMM_JIT_COMPILER: "nvrtc" (the default when unset or empty) or "nvcc"; any other value throws
// fgemm::Error(InvalidValue).
Compiler compiler_from_environment();

// A compiler located on this machine and the options it is run with: everything besides the sources that
// determines the cubin, and so part of the cache key.
struct Toolchain {
  Compiler compiler = Compiler::Nvrtc;
  std::string executable;  // nvcc's path; empty for NVRTC
  std::string version;     // identifies the compiler's release, e.g. "NVRTC 13.0 (libnvrtc.so.13, ...)"
  std::vector<std::string> flags;
};

// Locates `compiler`: loads NVRTC, or finds nvcc through FGEMM_NVCC, $CUDA_HOME/bin, PATH and
// /usr/local/cuda/bin. Throws fgemm::Error(Unsupported) when it is not installed.
Toolchain find_toolchain(Compiler compiler);

struct CompileResult {
  std::vector<char> cubin;
  std::string log;  // the compiler's output, with ptxas's statistics
  PtxasStats ptxas;
};

// Compiles `spec` with `toolchain`; `#include "fgemm/..."` resolves to `headers`. Throws fgemm::Error
// (Runtime) naming the kernel and holding the compiler's log when compilation fails. Honors
// FGEMM_JIT_DEBUG, FGEMM_PTXAS_VERBOSE and FGEMM_DUMP_SASS.
CompileResult compile(const KernelSpec& spec, const Toolchain& toolchain,
                      const std::vector<EmbeddedHeader>& headers = embedded_kernel_headers());

// Compiles `spec` against the library's kernel headers with the compiler found for `compiler`.
CompileResult compile(const KernelSpec& spec, Compiler compiler = Compiler::Nvrtc);

}  // namespace fgemm::jit
