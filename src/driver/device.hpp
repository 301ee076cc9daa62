// Devices and their primary contexts: the contexts the CUDA runtime, and so PyTorch, use.
#pragma once

#include <string>

#include "driver/cuda_types.hpp"

namespace fgemm::driver {

// What the kernels and the heuristics need to know of a device.
struct DeviceProperties {
  std::string name;
  int sm_count = 0;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int max_shared_memory_per_block_optin = 0;  // bytes a block may use after opting in
  int l2_cache_bytes = 0;
  int clock_khz = 0;              // the SMs' clock
  int memory_clock_khz = 0;       // DRAM's peak clock (data move on both of its edges)
  int memory_bus_width_bits = 0;  // DRAM's bus
};

// The driver's handle of device `device_index` (0-based, as in CUDA_VISIBLE_DEVICES order). Throws
// fgemm::Error(InvalidValue) when there is no such device.
CUdevice device_handle(int device_index);

// Makes the primary context of the device current on the calling thread, unless a context of that device
// is current already. Each primary context is retained once and kept for the life of the process.
void ensure_context(int device_index);

// Read from the driver once per device, then cached; thread-safe.
const DeviceProperties& device_properties(int device_index);

}  // namespace fgemm::driver
