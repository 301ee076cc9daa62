#include "deepgemm_options.hpp"

#include <cstdint>
#include <string>

#include "errors.hpp"

namespace nb = nanobind;

namespace fgemm::python {
namespace {

// The accepted recipes as Python tuples; never released, like the objects of torch_tensor.cpp. 1D2D: A per
// 1x128, B per 128x128 block; 1D1D: both per 1x128 block.
PyObject* g_recipe_1d2d = nullptr;
PyObject* g_recipe_1d1d = nullptr;
PyObject* g_recipe_a = nullptr;
PyObject* g_recipe_b_1d2d = nullptr;
PyObject* g_recipe_b_1d1d = nullptr;

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

[[noreturn]] void refuse_recipe(nb::handle value, const char* op, const char* arg, const std::string& accepted) {
  fail_argument(ErrorKind::InvalidValue, op, arg, "must be None or " + accepted + ", got " + nb::repr(value).c_str());
}

std::string repr(PyObject* object) { return nb::repr(nb::handle(object)).c_str(); }

// B's scale granularity along N that `value` names (128 for 1D2D, 1 for 1D1D where the operation takes it), 0
// for None.
int recipe_granularity(nb::handle value, PyObject* one_d_two_d, PyObject* one_d_one_d, bool takes_1d1d,
                       const char* op, const char* arg) {
  if (value.is_none()) return 0;
  if (equals(value, one_d_two_d)) return 128;
  if (takes_1d1d && equals(value, one_d_one_d)) return 1;
  refuse_recipe(value, op, arg, repr(one_d_two_d) + (takes_1d1d ? " or " + repr(one_d_one_d) : ""));
}

}  // namespace

void init_deepgemm_options() {
  g_recipe_1d2d = nb::make_tuple(1, 128, 128).release().ptr();
  g_recipe_1d1d = nb::make_tuple(1, 1, 128).release().ptr();
  g_recipe_a = nb::make_tuple(1, 128).release().ptr();
  g_recipe_b_1d2d = nb::make_tuple(128, 128).release().ptr();
  g_recipe_b_1d1d = nb::make_tuple(1, 128).release().ptr();
}

int check_deepgemm_options(const DeepGemmOptions& options, const char* op, bool takes_1d1d) {
  const int from_recipe = recipe_granularity(options.recipe, g_recipe_1d2d, g_recipe_1d1d, takes_1d1d, op, "recipe");
  const int from_recipe_b =
      recipe_granularity(options.recipe_b, g_recipe_b_1d2d, g_recipe_b_1d1d, takes_1d1d, op, "recipe_b");
  if (!options.recipe_a.is_none() && !equals(options.recipe_a, g_recipe_a))
    refuse_recipe(options.recipe_a, op, "recipe_a", repr(g_recipe_a));
  if (from_recipe != 0 && from_recipe_b != 0 && from_recipe != from_recipe_b)
    fail_argument(ErrorKind::InvalidValue, op, "recipe_b",
                  "disagrees with recipe " + repr(options.recipe.ptr()) + ": got " + repr(options.recipe_b.ptr()));
  check_compiled_dims(options.compiled_dims, op);
  if (!PyBool_Check(options.disable_ue8m0_cast.ptr()))
    fail_argument(ErrorKind::InvalidType, op, "disable_ue8m0_cast",
                  std::string("expected a bool, got ") + Py_TYPE(options.disable_ue8m0_cast.ptr())->tp_name);
  return from_recipe != 0 ? from_recipe : from_recipe_b;
}

void check_scales_of_recipe(int granularity, const TensorView& b, const TensorView& sfb, const char* op) {
  if (granularity == 0 || b.ndim != 2 || sfb.ndim != 2) return;  // the C++ API checks the shapes themselves
  const std::int64_t rows = (b.shape[0] + granularity - 1) / granularity;
  if (sfb.shape[0] != rows)
    fail_argument(ErrorKind::InvalidValue, op, "sfb",
                  std::string("expected ") + (granularity == 1 ? "[N, ceil(K/128)]" : "[ceil(N/128), ceil(K/128)]") +
                      " for the recipe given, " + std::to_string(rows) + " rows, got shape " + shape_string(sfb));
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
