// The INT8 quantization operations of include/fgemm/quantize_int8.hpp, bound with their outputs passed in: the
// Python functions of fgemm.quantize_int8 allocate them and call these.
#pragma once

#include <nanobind/nanobind.h>

namespace fgemm::python {

void register_quantize_int8_bindings(nanobind::module_& module);

}  // namespace fgemm::python
