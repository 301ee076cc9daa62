#include "driver/device.hpp"

#include <map>
#include <mutex>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "fgemm/error.hpp"

namespace fgemm::driver {
namespace {

int attribute(CUdevice device, CUdevice_attribute which) {
  int value = 0;
  check(cuda().cuDeviceGetAttribute(&value, which, device), "cuDeviceGetAttribute");
  return value;
}

DeviceProperties read_properties(CUdevice device) {
  DeviceProperties properties;
  char name[256] = {};
  check(cuda().cuDeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName");
  properties.name = name;
  properties.sm_count = attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  properties.compute_capability_major = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  properties.compute_capability_minor = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  properties.max_shared_memory_per_block_optin =
      attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  properties.l2_cache_bytes = attribute(device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  properties.clock_khz = attribute(device, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  properties.memory_clock_khz = attribute(device, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  properties.memory_bus_width_bits = attribute(device, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  return properties;
}

CUcontext primary_context(int device_index) {
  static std::mutex mutex;
  static std::map<int, CUcontext> retained;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = retained.find(device_index);
  if (found != retained.end()) return found->second;
  CUcontext context = nullptr;
  check(cuda().cuDevicePrimaryCtxRetain(&context, device_handle(device_index)), "cuDevicePrimaryCtxRetain");
  retained.emplace(device_index, context);
  return context;
}

}  // namespace

CUdevice device_handle(int device_index) {
  // The devices a process sees are fixed once the driver is initialised, so they are read once rather than
  // on every GEMM call (two driver calls each time otherwise).
  static const std::vector<CUdevice> handles = [] {
    int count = 0;
    check(cuda().cuDeviceGetCount(&count), "cuDeviceGetCount");
    std::vector<CUdevice> devices(count);
    for (int i = 0; i < count; ++i) check(cuda().cuDeviceGet(&devices[i], i), "cuDeviceGet");
    return devices;
  }();
  if (device_index < 0 || device_index >= static_cast<int>(handles.size()))
    throw Error(ErrorKind::InvalidValue, "fgemm: device index must be in [0, " + std::to_string(handles.size()) +
                                             ") on this machine, got " + std::to_string(device_index));
  return handles[device_index];
}

void ensure_context(int device_index) {
  const CudaDriver& driver = cuda();
  CUcontext current = nullptr;
  check(driver.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != nullptr) {
    CUdevice current_device = 0;
    check(driver.cuCtxGetDevice(&current_device), "cuCtxGetDevice");
    if (current_device == device_handle(device_index)) return;
  }
  check(driver.cuCtxSetCurrent(primary_context(device_index)), "cuCtxSetCurrent");
}

const DeviceProperties& device_properties(int device_index) {
  static std::mutex mutex;
  static std::map<int, DeviceProperties> cache;  // a map: references to its values stay valid
  std::lock_guard<std::mutex> lock(mutex);
  auto found = cache.find(device_index);
  if (found == cache.end())
    found = cache.emplace(device_index, read_properties(device_handle(device_index))).first;
  return found->second;
}

}  // namespace fgemm::driver
