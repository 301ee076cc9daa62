// Non-owning views of tensors passed to fgemm: a pointer, an element type, a shape, strides and a device.
#pragma once

#include <cstdint>
#include <string>

namespace fgemm {

enum class DType : std::uint8_t { E4M3, BF16, F32, I32, F16, I8 };

enum class DeviceType : std::uint8_t { CPU, CUDA };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;

  bool operator==(const Device& other) const { return type == other.type && index == other.index; }
  bool operator!=(const Device& other) const { return !(*this == other); }
};

// At most three dimensions: every fgemm operand is a matrix or a stack of matrices.
// Strides are counted in elements, as in PyTorch.
struct TensorView {
  static constexpr int kMaxDims = 3;

  void* data = nullptr;
  DType dtype = DType::F32;
  int ndim = 0;
  std::int64_t shape[kMaxDims] = {0, 0, 0};
  std::int64_t strides[kMaxDims] = {0, 0, 0};
  Device device{};

  std::int64_t size(int dim) const { return shape[dim]; }
  std::int64_t stride(int dim) const { return strides[dim]; }
  std::int64_t numel() const;
};

// A contiguous (row-major) view of `shape`.
TensorView make_tensor_view(void* data, DType dtype, std::initializer_list<std::int64_t> shape,
                            Device device = {});

std::size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);
std::string device_name(const Device& device);
std::string shape_string(const TensorView& tensor);

}  // namespace fgemm
