#include "cuda/hopper_device.hpp"

#include <atomic>
#include <cstdint>
#include <string>

#include "driver/device.hpp"
#include "fgemm/error.hpp"

namespace fgemm::cuda {

void use_hopper_device(int device) {
  driver::ensure_context(device);
  // Every GPU call passes here, and a device's compute capability never changes: once a device has passed, a
  // bit says so, and later calls read it instead of the properties (a lookup under a mutex).
  static std::atomic<std::uint64_t> hopper_devices{0};
  const std::uint64_t bit = device >= 0 && device < 64 ? std::uint64_t(1) << device : 0;
  if ((hopper_devices.load(std::memory_order_relaxed) & bit) != 0) return;
  const auto& properties = driver::device_properties(device);
  if (properties.compute_capability_major != 9 || properties.compute_capability_minor != 0)
    throw Error(ErrorKind::Unsupported, "fgemm: the GPU kernels need a Hopper GPU (sm_90), but device " +
                                            std::to_string(device) + " (" + properties.name + ") is sm_" +
                                            std::to_string(properties.compute_capability_major) +
                                            std::to_string(properties.compute_capability_minor));
  hopper_devices.fetch_or(bit, std::memory_order_relaxed);
}

}  // namespace fgemm::cuda
