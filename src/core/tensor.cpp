#include "fgemm/tensor.hpp"

#include <sstream>

#include "fgemm/error.hpp"

namespace fgemm {

std::int64_t TensorView::numel() const {
  std::int64_t count = 1;
  for (int i = 0; i < ndim; ++i) count *= shape[i];
  return count;
}

TensorView make_tensor_view(void* data, DType dtype, std::initializer_list<std::int64_t> shape, Device device) {
  if (shape.size() > TensorView::kMaxDims)
    throw Error(ErrorKind::InvalidValue, "fgemm: a tensor view has at most 3 dimensions");
  TensorView view;
  view.data = data;
  view.dtype = dtype;
  view.device = device;
  view.ndim = static_cast<int>(shape.size());
  int i = 0;
  for (auto dim : shape) view.shape[i++] = dim;
  std::int64_t stride = 1;
  for (int d = view.ndim - 1; d >= 0; --d) {
    view.strides[d] = stride;
    stride *= view.shape[d];
  }
  return view;
}

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::E4M3: return 1;
    case DType::BF16: return 2;
    case DType::F32: return 4;
    case DType::I32: return 4;
    case DType::F16: return 2;
    case DType::I8: return 1;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::E4M3: return "float8_e4m3fn";
    case DType::BF16: return "bfloat16";
    case DType::F32: return "float32";
    case DType::I32: return "int32";
    case DType::F16: return "float16";
    case DType::I8: return "int8";
  }
  return "unknown";
}

std::string device_name(const Device& device) {
  return device.type == DeviceType::CPU ? std::string("cpu") : "cuda:" + std::to_string(device.index);
}

std::string shape_string(const TensorView& tensor) {
  std::ostringstream out;
  out << "[";
  for (int i = 0; i < tensor.ndim; ++i) out << (i ? ", " : "") << tensor.shape[i];
  out << "]";
  return out.str();
}

}  // namespace fgemm
