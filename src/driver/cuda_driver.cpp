#include "driver/cuda_driver.hpp"

#include <memory>
#include <string>

#include "driver/dynamic_library.hpp"
#include "fgemm/error.hpp"

namespace fgemm::driver {
namespace {

constexpr const char* kLibraryName = "libcuda.so.1";

// The CUDA version whose ABI CudaDriver declares (see cuda_driver.hpp).
constexpr int kEntryPointVersion = 12000;

using GetProcAddress = CUresult (*)(const char* symbol, void** function, int cuda_version,
                                    std::uint64_t flags, CUdriverProcAddressQueryResult* status);

Error unusable(const std::string& reason) {
  return Error(ErrorKind::Unsupported, "fgemm: the CUDA driver cannot be used: " + reason);
}

// "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected), code 100"; the name and text only where
// the driver is loaded.
std::string describe(const CudaDriver* driver, CUresult result) {
  std::string description;
  const char* name = nullptr;
  const char* text = nullptr;
  if (driver != nullptr && driver->cuGetErrorName(result, &name) == CUDA_SUCCESS && name != nullptr) {
    description = name;
    if (driver->cuGetErrorString(result, &text) == CUDA_SUCCESS && text != nullptr)
      description += std::string(" (") + text + ")";
    description += ", ";
  }
  return description + "code " + std::to_string(static_cast<int>(result));
}

template <typename Function>
void bind(GetProcAddress get_proc_address, Function& function, const char* name) {
  void* address = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult result =
      get_proc_address(name, &address, kEntryPointVersion, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (result != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || address == nullptr)
    throw unusable(std::string("it has no ") + name + " (a driver for CUDA 12.0 or newer is needed)");
  function = reinterpret_cast<Function>(address);
}

std::unique_ptr<CudaDriver> load() {
  std::string error;
  void* library = open_library(kLibraryName, error);
  if (library == nullptr)
    throw unusable(std::string(kLibraryName) + " could not be opened (" + error +
                   "); CUDA tensors need an NVIDIA GPU and its driver");
  // The unversioned cuGetProcAddress is the CUDA 11 ABI; _v2 also reports whether the symbol was found.
  const auto get_proc_address = reinterpret_cast<GetProcAddress>(find_symbol(library, "cuGetProcAddress_v2"));
  if (get_proc_address == nullptr)
    throw unusable("it is older than CUDA 12.0 (it has no cuGetProcAddress_v2)");

  auto driver = std::make_unique<CudaDriver>();
#define FGEMM_BIND(entry_point) bind(get_proc_address, driver->entry_point, #entry_point)
  FGEMM_BIND(cuInit);
  FGEMM_BIND(cuDriverGetVersion);
  FGEMM_BIND(cuGetErrorName);
  FGEMM_BIND(cuGetErrorString);
  FGEMM_BIND(cuDeviceGet);
  FGEMM_BIND(cuDeviceGetCount);
  FGEMM_BIND(cuDeviceGetAttribute);
  FGEMM_BIND(cuDeviceGetName);
  FGEMM_BIND(cuCtxGetCurrent);
  FGEMM_BIND(cuCtxSetCurrent);
  FGEMM_BIND(cuCtxGetDevice);
  FGEMM_BIND(cuDevicePrimaryCtxRetain);
  FGEMM_BIND(cuModuleLoadData);
  FGEMM_BIND(cuModuleGetFunction);
  FGEMM_BIND(cuModuleUnload);
  FGEMM_BIND(cuFuncSetAttribute);
  FGEMM_BIND(cuLaunchKernelEx);
  FGEMM_BIND(cuOccupancyMaxActiveClusters);
  FGEMM_BIND(cuTensorMapEncodeTiled);
  FGEMM_BIND(cuMemAlloc);
  FGEMM_BIND(cuMemFree);
  FGEMM_BIND(cuMemAllocAsync);
  FGEMM_BIND(cuMemFreeAsync);
  FGEMM_BIND(cuMemcpyHtoDAsync);
  FGEMM_BIND(cuMemcpyDtoHAsync);
  FGEMM_BIND(cuStreamSynchronize);
  FGEMM_BIND(cuPointerGetAttribute);
#undef FGEMM_BIND

  const CUresult init = driver->cuInit(0);
  if (init == CUDA_ERROR_NO_DEVICE) throw unusable("no CUDA device is visible to this process");
  if (init != CUDA_SUCCESS) throw unusable("cuInit failed: " + describe(driver.get(), init));
  const CUresult version = driver->cuDriverGetVersion(&driver->version);
  if (version != CUDA_SUCCESS)
    throw unusable("cuDriverGetVersion failed: " + describe(driver.get(), version));
  return driver;
}

// The outcome of the one attempt to load the driver: the driver, or why it cannot be used.
struct LoadedDriver {
  std::unique_ptr<const CudaDriver> driver;
  std::string error;
};

const LoadedDriver& loaded_driver() {
  static const LoadedDriver loaded = [] {
    try {
      return LoadedDriver{load(), ""};
    } catch (const Error& error) {
      return LoadedDriver{nullptr, error.what()};
    }
  }();
  return loaded;
}

}  // namespace

const CudaDriver& cuda() {
  const LoadedDriver& loaded = loaded_driver();
  if (loaded.driver == nullptr) throw Error(ErrorKind::Unsupported, loaded.error);
  return *loaded.driver;
}

int device_count() noexcept {
  const LoadedDriver& loaded = loaded_driver();
  int count = 0;
  if (loaded.driver == nullptr || loaded.driver->cuDeviceGetCount(&count) != CUDA_SUCCESS) return 0;
  return count;
}

void check(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return;
  throw Error(ErrorKind::Runtime,
              std::string("fgemm: ") + what + " failed: " + describe(loaded_driver().driver.get(), result));
}

}  // namespace fgemm::driver
