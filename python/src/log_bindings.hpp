// The library's diagnostics (core/log.hpp) handed to a Python callable: fgemm._logging routes them to the
// "fgemm" logger.
#pragma once

#include <nanobind/nanobind.h>

namespace fgemm::python {

void register_log_bindings(nanobind::module_& module);

}  // namespace fgemm::python
