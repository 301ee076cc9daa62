// The INT8 GEMMs of fgemm/gemm_int8.hpp as functions of fgemm._C, with the FP8 GEMMs' calling convention.
#pragma once

#include <nanobind/nanobind.h>

namespace fgemm::python {

void register_gemm_int8_bindings(nanobind::module_& module);

}  // namespace fgemm::python
