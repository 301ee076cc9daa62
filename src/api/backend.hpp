// The one place a validated call chooses its backend: the CPU's for tensors in host memory, the sm90
// kernels' for tensors on a CUDA device. Every public operation goes through here (docs/ARCHITECTURE.md).
#pragma once

#include "fgemm/fgemm.hpp"

namespace fgemm::api {

// Runs `on_cpu(problem)` or `on_cuda(problem, stream)` according to the problem's device, unless the problem
// has nothing to compute.
template <typename Problem, typename OnCpu, typename OnCuda>
void run_on_backend(const Problem& problem, Stream stream, OnCpu on_cpu, OnCuda on_cuda) {
  if (problem.empty()) return;
  if (problem.device.type == DeviceType::CPU)
    on_cpu(problem);
  else
    on_cuda(problem, stream);
}

}  // namespace fgemm::api
