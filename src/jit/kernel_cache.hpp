// Kernels ready to launch, per device: compiled (or read from the disk cache) and loaded on first use.
#pragma once

#include <functional>
#include <string>

#include "driver/cuda_types.hpp"
#include "jit/kernel_spec.hpp"

namespace fgemm::jit {

// A kernel loaded into its device's primary context (or into another context of that device, where the
// thread that first asked for it had made one current); it stays loaded until the process ends.
struct Kernel {
  std::string name;
  driver::CUfunction function = nullptr;
  int dynamic_smem_bytes = 0;
};

// The kernel of `config_key` on device `device_index`. The first call for a (device, config_key) calls
// make_spec(), takes the cubin from the disk cache or compiles it (with the compiler FGEMM_JIT_COMPILER
// names), loads it into the device's primary context and raises the function's dynamic shared memory
// limit as the spec asks; a later call is one lookup in memory. `config_key` must tell apart every spec
// make_spec can produce. Thread-safe: callers wanting different keys proceed in parallel, callers of the
// same key wait for the one that builds it. The kernels are compiled for sm_90a: their callers check that
// the device is one (cuda::use_hopper_device). Throws fgemm::Error: Unsupported without a driver,
// InvalidValue for a device index out of range or a spec that asks for more shared memory than the device
// has, Runtime when compiling or loading fails (a later call tries again).
const Kernel& get_kernel(int device_index, const std::string& config_key,
                         const std::function<KernelSpec()>& make_spec);

// Whether the kernel of (device, config_key) is loaded already: get_kernel then costs one lookup.
bool is_loaded(int device_index, const std::string& config_key);

// Compiles `spec` into the disk cache (FGEMM_CACHE_DIR) with the compiler FGEMM_JIT_COMPILER names, as
// get_kernel would, without a device: true when it was compiled now, false when the cache had it.
// Thread-safe. Throws fgemm::Error(Runtime) when compiling fails.
bool compile_into_disk_cache(const KernelSpec& spec);

}  // namespace fgemm::jit
