#include "torch_tensor.hpp"

#include <iterator>
#include <type_traits>

#include "errors.hpp"

namespace nb = nanobind;

namespace fgemm::python {
namespace {

struct DTypeEntry {
  PyObject* torch_dtype;
  DType dtype;
};

// Objects looked up once. They are never released: they live as long as torch is imported, and releasing
// them from a static destructor could run after the interpreter has shut down.
struct Torch {
  PyTypeObject* tensor_type = nullptr;
  DTypeEntry dtypes[6] = {};
  PyObject* raw_stream = nullptr;      // torch._C._cuda_getCurrentRawStream(index) -> int, where torch has it
  PyObject* current_stream = nullptr;  // torch.cuda.current_stream(index), the public fallback
  // Attribute names, interned so that each lookup skips building a string.
  PyObject* data_ptr = nullptr;
  PyObject* dtype = nullptr;
  PyObject* shape = nullptr;
  PyObject* stride = nullptr;
  PyObject* is_cuda = nullptr;
  PyObject* is_cpu = nullptr;
  PyObject* get_device = nullptr;
  PyObject* device = nullptr;
  PyObject* cuda_stream = nullptr;
};

Torch* g_torch = nullptr;

nb::object checked(PyObject* result) {
  if (result == nullptr) throw nb::python_error();
  return nb::steal(result);
}

nb::object attribute(nb::handle object, PyObject* name) { return checked(PyObject_GetAttr(object.ptr(), name)); }

nb::object call_method(nb::handle object, PyObject* name) {
  return checked(PyObject_CallMethodNoArgs(object.ptr(), name));
}

std::int64_t as_int64(nb::handle object) {
  const long long value = PyLong_AsLongLong(object.ptr());
  if (value == -1 && PyErr_Occurred()) throw nb::python_error();
  return value;
}

std::string type_name_of(nb::handle object) { return Py_TYPE(object.ptr())->tp_name; }

std::string repr_of(nb::handle object) { return nb::repr(object).c_str(); }

DType dtype_of(nb::handle tensor, const char* op, const char* arg) {
  const nb::object torch_dtype = attribute(tensor, g_torch->dtype);
  for (const DTypeEntry& entry : g_torch->dtypes)
    if (entry.torch_dtype == torch_dtype.ptr()) return entry.dtype;
  fail_argument(ErrorKind::InvalidType, op, arg,
                "has dtype " + repr_of(torch_dtype) +
                    "; fgemm takes tensors of torch.float8_e4m3fn, torch.bfloat16, torch.float16, torch.float32, "
                    "torch.int32 or torch.int8");
}

Device device_of(nb::handle tensor, const char* op, const char* arg) {
  if (attribute(tensor, g_torch->is_cuda).ptr() == Py_True)
    return {DeviceType::CUDA, static_cast<int>(as_int64(call_method(tensor, g_torch->get_device)))};
  if (attribute(tensor, g_torch->is_cpu).ptr() == Py_True) return {DeviceType::CPU, 0};
  fail_argument(ErrorKind::InvalidValue, op, arg,
                "is on device '" + std::string(nb::str(attribute(tensor, g_torch->device)).c_str()) +
                    "'; fgemm runs tensors on the CPU or on CUDA devices");
}

// Fills `dims` from a tuple of ints (torch.Size is a tuple).
void read_dims(nb::handle tuple, std::int64_t* dims, int count) {
  for (int i = 0; i < count; ++i) dims[i] = as_int64(PyTuple_GET_ITEM(tuple.ptr(), i));
}

// A new reference that is never released (see Torch).
PyObject* keep(nb::object object) { return object.release().ptr(); }

}  // namespace

void init_torch_interop() {
  if (g_torch != nullptr) return;
  auto* torch = new Torch;
  const nb::module_ module = nb::module_::import_("torch");
  torch->tensor_type = reinterpret_cast<PyTypeObject*>(keep(module.attr("Tensor")));
  const std::pair<const char*, DType> dtypes[] = {{"float8_e4m3fn", DType::E4M3}, {"bfloat16", DType::BF16},
                                                  {"float16", DType::F16},        {"float32", DType::F32},
                                                  {"int32", DType::I32},          {"int8", DType::I8}};
  static_assert(std::size(dtypes) == std::extent_v<decltype(Torch::dtypes)>, "one entry per dtype fgemm reads");
  for (std::size_t i = 0; i < std::size(dtypes); ++i)
    torch->dtypes[i] = DTypeEntry{keep(module.attr(dtypes[i].first)), dtypes[i].second};
  const nb::object no_attribute = nb::none();
  const nb::object raw_stream = nb::getattr(module.attr("_C"), "_cuda_getCurrentRawStream", no_attribute);
  if (!raw_stream.is_none()) torch->raw_stream = keep(raw_stream);
  torch->current_stream = keep(nb::module_::import_("torch.cuda").attr("current_stream"));
  for (auto [slot, name] : {std::pair{&torch->data_ptr, "data_ptr"}, {&torch->dtype, "dtype"},
                            {&torch->shape, "shape"}, {&torch->stride, "stride"}, {&torch->is_cuda, "is_cuda"},
                            {&torch->is_cpu, "is_cpu"}, {&torch->get_device, "get_device"},
                            {&torch->device, "device"}, {&torch->cuda_stream, "cuda_stream"}})
    *slot = PyUnicode_InternFromString(name);
  g_torch = torch;
}

TensorView tensor_view(nb::handle object, const char* op, const char* arg) {
  if (!PyObject_TypeCheck(object.ptr(), g_torch->tensor_type))
    fail_argument(ErrorKind::InvalidType, op, arg, "expected a torch.Tensor, got " + type_name_of(object));
  TensorView view;
  view.dtype = dtype_of(object, op, arg);
  view.device = device_of(object, op, arg);
  const nb::object shape = attribute(object, g_torch->shape);
  const Py_ssize_t ndim = PyTuple_GET_SIZE(shape.ptr());
  if (ndim > TensorView::kMaxDims)
    fail_argument(ErrorKind::InvalidValue, op, arg,
                  "has " + std::to_string(ndim) + " dimensions; fgemm's operands have at most 3");
  view.ndim = static_cast<int>(ndim);
  read_dims(shape, view.shape, view.ndim);
  read_dims(call_method(object, g_torch->stride), view.strides, view.ndim);
  view.data = PyLong_AsVoidPtr(call_method(object, g_torch->data_ptr).ptr());
  if (PyErr_Occurred()) throw nb::python_error();
  return view;
}

std::optional<TensorView> optional_tensor_view(nb::handle object, const char* op, const char* arg) {
  if (object.is_none()) return std::nullopt;
  return tensor_view(object, op, arg);
}

std::pair<TensorView, TensorView> tensor_pair(nb::handle object, const char* op, const char* pair_arg,
                                              const char* scales_arg) {
  PyObject* pair = object.ptr();
  const bool is_pair = (PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2) ||
                       (PyList_Check(pair) && PyList_GET_SIZE(pair) == 2);
  if (!is_pair)
    fail_argument(ErrorKind::InvalidType, op, pair_arg,
                  std::string("expected a pair (") + pair_arg + ", " + scales_arg +
                      ") of a tensor and its FP32 scales, got " + type_name_of(object));
  const nb::handle data = PySequence_Fast_GET_ITEM(pair, 0);
  const nb::handle scales = PySequence_Fast_GET_ITEM(pair, 1);
  return {tensor_view(data, op, pair_arg), tensor_view(scales, op, scales_arg)};
}

std::int64_t int_argument(nb::handle object, const char* op, const char* arg) {
  if (PyBool_Check(object.ptr()) || !PyIndex_Check(object.ptr()))
    fail_argument(ErrorKind::InvalidType, op, arg, "expected an int, got " + type_name_of(object));
  const nb::object value = checked(PyNumber_Index(object.ptr()));
  const long long result = PyLong_AsLongLong(value.ptr());
  if (result == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    fail_argument(ErrorKind::InvalidValue, op, arg, "does not fit in 64 bits: " + repr_of(value));
  }
  return result;
}

std::vector<std::int64_t> int_list_argument(nb::handle object, const char* op, const char* arg) {
  if (!PyList_Check(object.ptr()) && !PyTuple_Check(object.ptr()))
    fail_argument(ErrorKind::InvalidType, op, arg, "expected a list of ints, got " + type_name_of(object));
  std::vector<std::int64_t> values;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(object.ptr()); ++i)
    values.push_back(int_argument(PySequence_Fast_GET_ITEM(object.ptr(), i), op, arg));
  return values;
}

Stream current_stream(const Device& device) {
  if (device.type == DeviceType::CPU) return nullptr;
  const nb::object index = nb::int_(device.index);
  const nb::object handle =
      g_torch->raw_stream != nullptr
          ? checked(PyObject_CallOneArg(g_torch->raw_stream, index.ptr()))
          : attribute(checked(PyObject_CallOneArg(g_torch->current_stream, index.ptr())), g_torch->cuda_stream);
  void* stream = PyLong_AsVoidPtr(handle.ptr());
  if (PyErr_Occurred()) throw nb::python_error();
  return stream;
}

}  // namespace fgemm::python
