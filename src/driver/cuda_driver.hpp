// The CUDA driver (libcuda), opened at run time so that fgemm loads and its CPU backend runs on machines
// without a GPU. Every call into the driver in the library goes through cuda().
#pragma once

#include <cstddef>
#include <cstdint>

#include "driver/cuda_types.hpp"

namespace fgemm::driver {

// Entry points bound with the ABI they had in CUDA 12.0 (the oldest driver that can run sm_90a kernels
// with tensor maps): cuMemAlloc is cuMemAlloc_v2, and so on.
struct CudaDriver {
  int version = 0;  // of the installed driver, e.g. 13000 for CUDA 13.0

  CUresult (*cuInit)(unsigned int flags) = nullptr;
  CUresult (*cuDriverGetVersion)(int* version) = nullptr;
  CUresult (*cuGetErrorName)(CUresult error, const char** name) = nullptr;
  CUresult (*cuGetErrorString)(CUresult error, const char** text) = nullptr;

  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*cuDeviceGetCount)(int* count) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int* value, CUdevice_attribute attribute, CUdevice device) = nullptr;
  CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device) = nullptr;

  CUresult (*cuCtxGetCurrent)(CUcontext* context) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext context) = nullptr;
  CUresult (*cuCtxGetDevice)(CUdevice* device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device) = nullptr;

  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule module) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction function, CUfunction_attribute attribute, int value) = nullptr;
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig* config, CUfunction function, void** params,
                               void** extra) = nullptr;
  CUresult (*cuOccupancyMaxActiveClusters)(int* clusters, CUfunction function, const CUlaunchConfig* config) = nullptr;
  CUresult (*cuTensorMapEncodeTiled)(CUtensorMap* map, CUtensorMapDataType data_type, std::uint32_t rank,
                                     void* address, const std::uint64_t* sizes, const std::uint64_t* strides,
                                     const std::uint32_t* box_sizes, const std::uint32_t* element_strides,
                                     CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                     CUtensorMapL2promotion l2_promotion,
                                     CUtensorMapFloatOOBfill oob_fill) = nullptr;

  CUresult (*cuMemAlloc)(CUdeviceptr* pointer, std::size_t bytes) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr pointer) = nullptr;
  CUresult (*cuMemAllocAsync)(CUdeviceptr* pointer, std::size_t bytes, CUstream stream) = nullptr;
  CUresult (*cuMemFreeAsync)(CUdeviceptr pointer, CUstream stream) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr destination, const void* source, std::size_t bytes,
                                CUstream stream) = nullptr;
  CUresult (*cuMemcpyDtoHAsync)(void* destination, CUdeviceptr source, std::size_t bytes,
                                CUstream stream) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream stream) = nullptr;
  CUresult (*cuPointerGetAttribute)(void* value, CUpointer_attribute attribute,
                                    CUdeviceptr pointer) = nullptr;
};

// The driver, loaded and initialised (cuInit) on first use, once per process; thread-safe. Throws
// fgemm::Error(Unsupported) when there is no usable driver or no device, with the reason; later calls
// throw the same error again without retrying.
const CudaDriver& cuda();

// The number of CUDA devices, 0 where cuda() would throw. Never throws.
int device_count() noexcept;

// Throws fgemm::Error(Runtime) naming `what` and the driver's name and description of `result`, unless
// `result` is CUDA_SUCCESS.
void check(CUresult result, const char* what);

}  // namespace fgemm::driver
