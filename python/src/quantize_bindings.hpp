// The quantization operations of include/fgemm/quantize.hpp, bound with their outputs passed in: the
// Python functions of fgemm.quantize and fgemm.layout allocate them and call these.
#pragma once

#include <nanobind/nanobind.h>

namespace fgemm::python {

void register_quantize_bindings(nanobind::module_& module);

}  // namespace fgemm::python
