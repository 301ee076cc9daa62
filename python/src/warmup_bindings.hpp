// fgemm::warmup (include/fgemm/warmup.hpp), bound as _C.warmup; fgemm.warmup reads the user's shapes and calls it.
#pragma once

#include <nanobind/nanobind.h>

namespace fgemm::python {

void register_warmup_bindings(nanobind::module_& module);

}  // namespace fgemm::python
