// The BF16 and FP16 GEMMs of fgemm/gemm_16bit.hpp as functions of fgemm._C, with DeepGEMM's names and arguments.
#pragma once

#include <nanobind/nanobind.h>

namespace fgemm::python {

void register_gemm_16bit_bindings(nanobind::module_& module);

}  // namespace fgemm::python
