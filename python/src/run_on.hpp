// How a binding runs a GEMM on the device of its tensors.
#pragma once

#include <nanobind/nanobind.h>

#include "fgemm/fgemm.hpp"
#include "torch_tensor.hpp"

namespace fgemm::python {

// Calls `gemm` with the stream of `device`. On the CPU the GEMM runs inside the call, so the GIL is released
// meanwhile (the caller's references keep the tensors alive); on a GPU the call only queues work.
template <typename Gemm>
void run_on(const Device& device, const Gemm& gemm) {
  if (device.type == DeviceType::CPU) {
    nanobind::gil_scoped_release released;
    gemm(nullptr);
  } else {
    gemm(current_stream(device));
  }
}

}  // namespace fgemm::python
