#include "cuda/hopper_device.hpp"

#include <string>

#include "driver/device.hpp"
#include "fgemm/error.hpp"

namespace fgemm::cuda {

void use_hopper_device(int device) {
  driver::ensure_context(device);
  const auto& properties = driver::device_properties(device);
  if (properties.compute_capability_major != 9 || properties.compute_capability_minor != 0)
    throw Error(ErrorKind::Unsupported, "fgemm: the GPU kernels need a Hopper GPU (sm_90), but device " +
                                            std::to_string(device) + " (" + properties.name + ") is sm_" +
                                            std::to_string(properties.compute_capability_major) +
                                            std::to_string(properties.compute_capability_minor));
}

}  // namespace fgemm::cuda
