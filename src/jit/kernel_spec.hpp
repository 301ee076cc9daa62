// What the JIT compiles: one kernel's source and how it is launched.
#pragma once

#include <string>

namespace fgemm::jit {

struct KernelSpec {
  std::string name;    // the kernel's symbol: an extern "C" __global__ function of `source`
  std::string source;  // CUDA C++; may #include the headers under kernels/, e.g. "fgemm/common.cuh"
  int dynamic_smem_bytes = 0;
};

}  // namespace fgemm::jit
