// Errors raised by the binding itself, worded and mapped to Python exceptions as the C++ API's are.
#pragma once

#include <string>

#include "fgemm/error.hpp"

namespace fgemm::python {

// Throws fgemm::Error "fgemm.<op>: argument '<arg>' <what>", the form every message of the C++ API takes.
[[noreturn]] void fail_argument(ErrorKind kind, const char* op, const char* arg, const std::string& what);

// Maps fgemm::Error to Python: InvalidValue -> ValueError, InvalidType -> TypeError, others -> RuntimeError.
void register_error_translation();

}  // namespace fgemm::python
