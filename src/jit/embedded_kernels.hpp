// The text of every header under kernels/, embedded at build time (cmake/EmbedKernels.cmake).
#pragma once

#include <vector>

namespace fgemm::jit {

struct EmbeddedHeader {
  const char* name;  // path relative to kernels/, e.g. "fgemm/ptx.cuh"
  const char* text;
};

const std::vector<EmbeddedHeader>& embedded_kernel_headers();

}  // namespace fgemm::jit
