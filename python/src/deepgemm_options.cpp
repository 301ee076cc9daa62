#include "deepgemm_options.hpp"

#include <string>

#include "errors.hpp"

namespace nb = nanobind;

namespace fgemm::python {
namespace {

// The accepted recipes as Python tuples; never released, like the objects of torch_tensor.cpp.
PyObject* g_recipe = nullptr;
PyObject* g_recipe_a = nullptr;
PyObject* g_recipe_b = nullptr;

// A sequence of ints equal to `expected` (a tuple), so that [1, 128, 128] is accepted as DeepGEMM does.
bool equals(nb::handle value, PyObject* expected) {
  if (!PySequence_Check(value.ptr()) || PyUnicode_Check(value.ptr())) return false;
  PyObject* as_tuple = PySequence_Tuple(value.ptr());
  if (as_tuple == nullptr) {
    PyErr_Clear();
    return false;
  }
  const nb::object tuple = nb::steal(as_tuple);
  const int same = PyObject_RichCompareBool(tuple.ptr(), expected, Py_EQ);
  if (same < 0) PyErr_Clear();
  return same == 1;
}

void check_recipe(nb::handle value, PyObject* expected, const char* op, const char* arg, const char* meaning) {
  if (value.is_none() || equals(value, expected)) return;
  fail_argument(ErrorKind::InvalidValue, op, arg,
                std::string("must be None or ") + nb::repr(expected).c_str() + " (" + meaning +
                    ", the one recipe fgemm implements), got " + nb::repr(value).c_str());
}

}  // namespace

void init_deepgemm_options() {
  g_recipe = nb::make_tuple(1, 128, 128).release().ptr();
  g_recipe_a = nb::make_tuple(1, 128).release().ptr();
  g_recipe_b = nb::make_tuple(128, 128).release().ptr();
}

void check_deepgemm_options(const DeepGemmOptions& options, const char* op) {
  check_recipe(options.recipe, g_recipe, op, "recipe",
               "scales per 1x128 block of A and per 128x128 block of B, K blocks of 128");
  check_recipe(options.recipe_a, g_recipe_a, op, "recipe_a", "scales per 1x128 block of A");
  check_recipe(options.recipe_b, g_recipe_b, op, "recipe_b", "scales per 128x128 block of B");
  check_compiled_dims(options.compiled_dims, op);
  if (!PyBool_Check(options.disable_ue8m0_cast.ptr()))
    fail_argument(ErrorKind::InvalidType, op, "disable_ue8m0_cast",
                  std::string("expected a bool, got ") + Py_TYPE(options.disable_ue8m0_cast.ptr())->tp_name);
}

void check_compiled_dims(nb::handle compiled_dims, const char* op) {
  if (!PyUnicode_Check(compiled_dims.ptr()))
    fail_argument(ErrorKind::InvalidType, op, "compiled_dims",
                  std::string("expected a str, got ") + Py_TYPE(compiled_dims.ptr())->tp_name);
}

ContiguousLayout contiguous_layout_form(nb::handle use_psum_layout, const char* op) {
  if (!PyBool_Check(use_psum_layout.ptr()))
    fail_argument(ErrorKind::InvalidType, op, "use_psum_layout",
                  std::string("expected a bool, got ") + Py_TYPE(use_psum_layout.ptr())->tp_name);
  return use_psum_layout.ptr() == Py_True ? ContiguousLayout::Psum : ContiguousLayout::MIndices;
}

}  // namespace fgemm::python
