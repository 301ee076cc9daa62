// The two compilers behind jit::compile(); each turns a kernel's sources into a cubin and a log.
#pragma once

#include <string>
#include <vector>

#include "jit/compiler.hpp"

namespace fgemm::jit {

struct CompilerOutput {
  bool succeeded = false;
  std::vector<char> cubin;
  std::string log;
};

Toolchain nvrtc_toolchain();
CompilerOutput compile_with_nvrtc(const KernelSpec& spec, const Toolchain& toolchain,
                                  const std::vector<EmbeddedHeader>& headers);

Toolchain nvcc_toolchain();
CompilerOutput compile_with_nvcc(const KernelSpec& spec, const Toolchain& toolchain,
                                 const std::vector<EmbeddedHeader>& headers);

}  // namespace fgemm::jit
