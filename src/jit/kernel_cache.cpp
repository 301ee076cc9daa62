#include "jit/kernel_cache.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "driver/device.hpp"
#include "fgemm/error.hpp"
#include "jit/cached_compile.hpp"

namespace fgemm::jit {
namespace {

// Dynamic shared memory a kernel may use without opting in through cuFuncSetAttribute.
constexpr int kDefaultDynamicSmemLimit = 48 * 1024;

struct Entry {
  std::mutex building;
  std::atomic<bool> ready{false};
  Kernel kernel;
};

class KernelRegistry {
 public:
  // The entry of (device, key), or nullptr when there is none yet.
  Entry* find(int device_index, const std::string& config_key) {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    if (device_index < 0 || device_index >= static_cast<int>(devices_.size())) return nullptr;
    const auto& entries = devices_[device_index];
    const auto found = entries.find(config_key);
    return found == entries.end() ? nullptr : found->second.get();
  }

  Entry& find_or_add(int device_index, const std::string& config_key) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    if (device_index >= static_cast<int>(devices_.size())) devices_.resize(device_index + 1);
    std::unique_ptr<Entry>& entry = devices_[device_index][config_key];
    if (entry == nullptr) entry = std::make_unique<Entry>();
    return *entry;
  }

 private:
  std::shared_mutex mutex_;
  std::vector<std::unordered_map<std::string, std::unique_ptr<Entry>>> devices_;
};

KernelRegistry& registry() {
  // Never destroyed: loaded modules must not be unloaded during exit, when the driver may be gone.
  static auto* registry = new KernelRegistry;
  return *registry;
}

void check_device_fits(int device_index, const KernelSpec& spec) {
  const driver::DeviceProperties& device = driver::device_properties(device_index);
  if (spec.dynamic_smem_bytes > device.max_shared_memory_per_block_optin)
    throw Error(ErrorKind::InvalidValue,
                "fgemm: kernel '" + spec.name + "' asks for " + std::to_string(spec.dynamic_smem_bytes) +
                    " bytes of dynamic shared memory, more than the " +
                    std::to_string(device.max_shared_memory_per_block_optin) + " a block of device " +
                    std::to_string(device_index) + " can have");
}

Kernel load_kernel(int device_index, const KernelSpec& spec) {
  check_device_fits(device_index, spec);
  const CachedCompile compiled = compile_cached(spec, find_toolchain(compiler_from_environment()),
                                                embedded_kernel_headers(), DiskCache::from_environment());
  driver::ensure_context(device_index);
  const driver::CudaDriver& cuda = driver::cuda();
  driver::CUmodule module = nullptr;
  driver::check(cuda.cuModuleLoadData(&module, compiled.result.cubin.data()),
                ("cuModuleLoadData of kernel " + spec.name).c_str());
  try {
    Kernel kernel{spec.name, nullptr, spec.dynamic_smem_bytes};
    driver::check(cuda.cuModuleGetFunction(&kernel.function, module, spec.name.c_str()),
                  ("cuModuleGetFunction of kernel " + spec.name).c_str());
    if (spec.dynamic_smem_bytes > kDefaultDynamicSmemLimit)
      driver::check(
          cuda.cuFuncSetAttribute(kernel.function, driver::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                  spec.dynamic_smem_bytes),
          ("cuFuncSetAttribute of kernel " + spec.name).c_str());
    return kernel;
  } catch (...) {
    cuda.cuModuleUnload(module);
    throw;
  }
}

}  // namespace

const Kernel& get_kernel(int device_index, const std::string& config_key,
                         const std::function<KernelSpec()>& make_spec) {
  if (Entry* entry = registry().find(device_index, config_key);
      entry != nullptr && entry->ready.load(std::memory_order_acquire))
    return entry->kernel;
  driver::device_handle(device_index);  // a missing driver or a bad index fails here, before compiling
  Entry& entry = registry().find_or_add(device_index, config_key);
  std::lock_guard<std::mutex> lock(entry.building);
  if (!entry.ready.load(std::memory_order_relaxed)) {
    entry.kernel = load_kernel(device_index, make_spec());
    entry.ready.store(true, std::memory_order_release);
  }
  return entry.kernel;
}

bool is_loaded(int device_index, const std::string& config_key) {
  const Entry* entry = registry().find(device_index, config_key);
  return entry != nullptr && entry->ready.load(std::memory_order_acquire);
}

bool compile_into_disk_cache(const KernelSpec& spec) {
  return !compile_cached(spec, find_toolchain(compiler_from_environment()), embedded_kernel_headers(),
                         DiskCache::from_environment())
              .cache_hit;
}

}  // namespace fgemm::jit
