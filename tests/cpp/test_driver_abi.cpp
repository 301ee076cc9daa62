// The driver and NVRTC declarations of src/driver must match cuda.h and nvrtc.h, which the library never
// includes. Where the toolkit's headers are on the include path, this file compares every value, size and
// entry-point signature at compile time.
#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>

#include "driver/cuda_driver.hpp"
#include "driver/cuda_types.hpp"
#include "driver/nvrtc.hpp"

namespace ours = fgemm::driver;

// The types of the library's entry points, taken before cuda.h is included: cuda.h defines macros such as
// cuMemAlloc -> cuMemAlloc_v2 that would rename the members (and the names are pasted with ## below, which
// keeps them from expansion). The same macros make `&::cuMemAlloc` below name the _v2 function, which is
// the ABI the library binds.
namespace declared {
#define FGEMM_DECLARED(entry_point) using type_##entry_point = decltype(ours::CudaDriver::entry_point);
FGEMM_DECLARED(cuInit)
FGEMM_DECLARED(cuDriverGetVersion)
FGEMM_DECLARED(cuGetErrorName)
FGEMM_DECLARED(cuGetErrorString)
FGEMM_DECLARED(cuDeviceGet)
FGEMM_DECLARED(cuDeviceGetCount)
FGEMM_DECLARED(cuDeviceGetAttribute)
FGEMM_DECLARED(cuDeviceGetName)
FGEMM_DECLARED(cuCtxGetCurrent)
FGEMM_DECLARED(cuCtxSetCurrent)
FGEMM_DECLARED(cuCtxGetDevice)
FGEMM_DECLARED(cuDevicePrimaryCtxRetain)
FGEMM_DECLARED(cuModuleLoadData)
FGEMM_DECLARED(cuModuleGetFunction)
FGEMM_DECLARED(cuModuleUnload)
FGEMM_DECLARED(cuFuncSetAttribute)
FGEMM_DECLARED(cuLaunchKernelEx)
FGEMM_DECLARED(cuTensorMapEncodeTiled)
FGEMM_DECLARED(cuMemAlloc)
FGEMM_DECLARED(cuMemFree)
FGEMM_DECLARED(cuMemAllocAsync)
FGEMM_DECLARED(cuMemFreeAsync)
FGEMM_DECLARED(cuMemcpyHtoDAsync)
FGEMM_DECLARED(cuMemcpyDtoHAsync)
FGEMM_DECLARED(cuStreamSynchronize)
FGEMM_DECLARED(cuPointerGetAttribute)
#undef FGEMM_DECLARED
#define FGEMM_DECLARED(entry_point) using type_##entry_point = decltype(ours::Nvrtc::entry_point);
FGEMM_DECLARED(nvrtcVersion)
FGEMM_DECLARED(nvrtcCreateProgram)
FGEMM_DECLARED(nvrtcCompileProgram)
FGEMM_DECLARED(nvrtcGetProgramLogSize)
FGEMM_DECLARED(nvrtcGetProgramLog)
FGEMM_DECLARED(nvrtcGetCUBINSize)
FGEMM_DECLARED(nvrtcGetCUBIN)
FGEMM_DECLARED(nvrtcDestroyProgram)
FGEMM_DECLARED(nvrtcGetErrorString)
#undef FGEMM_DECLARED
}  // namespace declared

#if __has_include(<cuda.h>) && __has_include(<nvrtc.h>)
#include <cuda.h>
#include <nvrtc.h>

namespace {

template <typename T>
constexpr bool is_scalar_like = std::is_integral_v<T> || std::is_enum_v<T>;

template <typename T, typename = void>
struct IsComplete : std::false_type {};
template <typename T>
struct IsComplete<T, std::void_t<decltype(sizeof(T))>> : std::true_type {};

// Two types are passed alike by the C calling convention: the same type, integers or enumerations of one
// size, pointers to types passed alike, classes of one size whose alignment is at least the header's, or
// two opaque (incomplete) structs, which only handles point to.
template <typename Ours, typename Theirs>
constexpr bool same_abi() {
  if constexpr (std::is_same_v<Ours, Theirs>) {
    return true;
  } else if constexpr (std::is_pointer_v<Ours> && std::is_pointer_v<Theirs>) {
    return same_abi<std::remove_pointer_t<Ours>, std::remove_pointer_t<Theirs>>();
  } else if constexpr (std::is_const_v<Ours> || std::is_const_v<Theirs>) {
    return std::is_const_v<Ours> == std::is_const_v<Theirs> &&
           same_abi<std::remove_const_t<Ours>, std::remove_const_t<Theirs>>();
  } else if constexpr (is_scalar_like<Ours> && is_scalar_like<Theirs>) {
    return sizeof(Ours) == sizeof(Theirs);
  } else if constexpr (std::is_class_v<Ours> && std::is_class_v<Theirs>) {
    if constexpr (!IsComplete<Ours>::value || !IsComplete<Theirs>::value)
      return !IsComplete<Ours>::value && !IsComplete<Theirs>::value;
    else
      return sizeof(Ours) == sizeof(Theirs) && alignof(Ours) >= alignof(Theirs);
  } else {
    return false;
  }
}

template <typename Ours, typename Theirs>
struct SameSignature : std::false_type {};

template <typename OurResult, typename... OurArguments, typename TheirResult, typename... TheirArguments>
struct SameSignature<OurResult (*)(OurArguments...), TheirResult (*)(TheirArguments...)> {
  static constexpr bool value = [] {
    if constexpr (sizeof...(OurArguments) != sizeof...(TheirArguments)) {
      return false;
    } else {
      return same_abi<OurResult, TheirResult>() && (same_abi<OurArguments, TheirArguments>() && ...);
    }
  }();
};

#define FGEMM_EXPECT_SAME_SIGNATURE(entry_point) \
  static_assert(SameSignature<declared::type_##entry_point, decltype(&::entry_point)>::value, #entry_point)
FGEMM_EXPECT_SAME_SIGNATURE(cuInit);
FGEMM_EXPECT_SAME_SIGNATURE(cuDriverGetVersion);
FGEMM_EXPECT_SAME_SIGNATURE(cuGetErrorName);
FGEMM_EXPECT_SAME_SIGNATURE(cuGetErrorString);
FGEMM_EXPECT_SAME_SIGNATURE(cuDeviceGet);
FGEMM_EXPECT_SAME_SIGNATURE(cuDeviceGetCount);
FGEMM_EXPECT_SAME_SIGNATURE(cuDeviceGetAttribute);
FGEMM_EXPECT_SAME_SIGNATURE(cuDeviceGetName);
FGEMM_EXPECT_SAME_SIGNATURE(cuCtxGetCurrent);
FGEMM_EXPECT_SAME_SIGNATURE(cuCtxSetCurrent);
FGEMM_EXPECT_SAME_SIGNATURE(cuCtxGetDevice);
FGEMM_EXPECT_SAME_SIGNATURE(cuDevicePrimaryCtxRetain);
FGEMM_EXPECT_SAME_SIGNATURE(cuModuleLoadData);
FGEMM_EXPECT_SAME_SIGNATURE(cuModuleGetFunction);
FGEMM_EXPECT_SAME_SIGNATURE(cuModuleUnload);
FGEMM_EXPECT_SAME_SIGNATURE(cuFuncSetAttribute);
FGEMM_EXPECT_SAME_SIGNATURE(cuLaunchKernelEx);
FGEMM_EXPECT_SAME_SIGNATURE(cuTensorMapEncodeTiled);
FGEMM_EXPECT_SAME_SIGNATURE(cuMemAlloc);
FGEMM_EXPECT_SAME_SIGNATURE(cuMemFree);
FGEMM_EXPECT_SAME_SIGNATURE(cuMemAllocAsync);
FGEMM_EXPECT_SAME_SIGNATURE(cuMemFreeAsync);
FGEMM_EXPECT_SAME_SIGNATURE(cuMemcpyHtoDAsync);
FGEMM_EXPECT_SAME_SIGNATURE(cuMemcpyDtoHAsync);
FGEMM_EXPECT_SAME_SIGNATURE(cuStreamSynchronize);
FGEMM_EXPECT_SAME_SIGNATURE(cuPointerGetAttribute);
FGEMM_EXPECT_SAME_SIGNATURE(nvrtcVersion);
FGEMM_EXPECT_SAME_SIGNATURE(nvrtcCreateProgram);
FGEMM_EXPECT_SAME_SIGNATURE(nvrtcCompileProgram);
FGEMM_EXPECT_SAME_SIGNATURE(nvrtcGetProgramLogSize);
FGEMM_EXPECT_SAME_SIGNATURE(nvrtcGetProgramLog);
FGEMM_EXPECT_SAME_SIGNATURE(nvrtcGetCUBINSize);
FGEMM_EXPECT_SAME_SIGNATURE(nvrtcGetCUBIN);
FGEMM_EXPECT_SAME_SIGNATURE(nvrtcDestroyProgram);
FGEMM_EXPECT_SAME_SIGNATURE(nvrtcGetErrorString);
#undef FGEMM_EXPECT_SAME_SIGNATURE

// The cuGetProcAddress the loader binds by its versioned name.
static_assert(
    SameSignature<CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*),
                  decltype(&::cuGetProcAddress_v2)>::value);

#define FGEMM_EXPECT_SAME_VALUE(name) \
  static_assert(static_cast<long long>(ours::name) == static_cast<long long>(::name), #name)
FGEMM_EXPECT_SAME_VALUE(CUDA_SUCCESS);
FGEMM_EXPECT_SAME_VALUE(CUDA_ERROR_NOT_INITIALIZED);
FGEMM_EXPECT_SAME_VALUE(CUDA_ERROR_NO_DEVICE);
FGEMM_EXPECT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
FGEMM_EXPECT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
FGEMM_EXPECT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
FGEMM_EXPECT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
FGEMM_EXPECT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
FGEMM_EXPECT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
FGEMM_EXPECT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
FGEMM_EXPECT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
FGEMM_EXPECT_SAME_VALUE(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
FGEMM_EXPECT_SAME_VALUE(CU_POINTER_ATTRIBUTE_CONTEXT);
FGEMM_EXPECT_SAME_VALUE(CU_POINTER_ATTRIBUTE_MEMORY_TYPE);
FGEMM_EXPECT_SAME_VALUE(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL);
FGEMM_EXPECT_SAME_VALUE(CU_MEMORYTYPE_HOST);
FGEMM_EXPECT_SAME_VALUE(CU_MEMORYTYPE_DEVICE);
FGEMM_EXPECT_SAME_VALUE(CU_MEMORYTYPE_ARRAY);
FGEMM_EXPECT_SAME_VALUE(CU_MEMORYTYPE_UNIFIED);
FGEMM_EXPECT_SAME_VALUE(CU_GET_PROC_ADDRESS_DEFAULT);
FGEMM_EXPECT_SAME_VALUE(CU_GET_PROC_ADDRESS_SUCCESS);
FGEMM_EXPECT_SAME_VALUE(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
FGEMM_EXPECT_SAME_VALUE(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_UINT8);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_UINT16);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_UINT32);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_INT32);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_UINT64);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_INT64);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_FLOAT64);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_TFLOAT32);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_INTERLEAVE_NONE);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_INTERLEAVE_16B);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_INTERLEAVE_32B);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_NONE);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_32B);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_64B);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_128B);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_L2_PROMOTION_NONE);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_L2_PROMOTION_L2_64B);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
FGEMM_EXPECT_SAME_VALUE(CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
FGEMM_EXPECT_SAME_VALUE(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
FGEMM_EXPECT_SAME_VALUE(NVRTC_SUCCESS);
#undef FGEMM_EXPECT_SAME_VALUE

// The driver reads these structures, so their layout must be the header's, member by member.
static_assert(sizeof(ours::CUtensorMap) == sizeof(::CUtensorMap));
static_assert(alignof(ours::CUtensorMap) >= alignof(::CUtensorMap));
static_assert(sizeof(ours::CUlaunchAttributeValue) == sizeof(::CUlaunchAttributeValue));
static_assert(alignof(ours::CUlaunchAttributeValue) == alignof(::CUlaunchAttributeValue));
static_assert(sizeof(ours::CUlaunchAttribute) == sizeof(::CUlaunchAttribute));
static_assert(offsetof(ours::CUlaunchAttribute, value) == offsetof(::CUlaunchAttribute, value));
static_assert(offsetof(ours::CUlaunchAttributeValue, clusterDim) ==
              offsetof(::CUlaunchAttributeValue, clusterDim));
static_assert(sizeof(ours::CUlaunchConfig) == sizeof(::CUlaunchConfig));
static_assert(offsetof(ours::CUlaunchConfig, sharedMemBytes) == offsetof(::CUlaunchConfig, sharedMemBytes));
static_assert(offsetof(ours::CUlaunchConfig, hStream) == offsetof(::CUlaunchConfig, hStream));
static_assert(offsetof(ours::CUlaunchConfig, attrs) == offsetof(::CUlaunchConfig, attrs));
static_assert(offsetof(ours::CUlaunchConfig, numAttrs) == offsetof(::CUlaunchConfig, numAttrs));
static_assert(std::is_same_v<ours::CUdeviceptr, ::CUdeviceptr>);
static_assert(std::is_same_v<ours::CUdevice, ::CUdevice>);
static_assert(std::is_same_v<ours::CUstream, ::CUstream>);
static_assert(std::is_same_v<ours::CUfunction, ::CUfunction>);

}  // namespace

TEST(DriverAbi, MatchesTheToolkitHeaders) {
  SUCCEED() << "checked at compile time against cuda.h " << CUDA_VERSION;
}

#else

TEST(DriverAbi, MatchesTheToolkitHeaders) {
  GTEST_SKIP() << "cuda.h and nvrtc.h are not on this build's include path: the declarations of src/driver "
                  "were not compared with them";
}

#endif
