#include "errors.hpp"

#include <nanobind/nanobind.h>

namespace fgemm::python {

void fail_argument(ErrorKind kind, const char* op, const char* arg, const std::string& what) {
  throw Error(kind, std::string("fgemm.") + op + ": argument '" + arg + "' " + what);
}

namespace {

PyObject* python_exception_type(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::InvalidValue: return PyExc_ValueError;
    case ErrorKind::InvalidType: return PyExc_TypeError;
    case ErrorKind::Unsupported:
    case ErrorKind::Runtime: return PyExc_RuntimeError;
  }
  return PyExc_RuntimeError;
}

void translate(const std::exception_ptr& error, void*) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    PyErr_SetString(python_exception_type(e.kind()), e.what());
  }
}

}  // namespace

void register_error_translation() { nanobind::register_exception_translator(translate); }

}  // namespace fgemm::python
