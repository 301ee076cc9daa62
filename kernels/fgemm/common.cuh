// Basic types and helpers shared by every kernel. NVRTC compiles these headers with no system headers.
// These headers, the scheduling ones and the kernels' parameter blocks also compile as plain C++: the host
// shares their definitions (one ceil_div, one layout of each parameter block), and its tests run the
// scheduler on the CPU.
#pragma once

#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
#define __host__
#define __device__
#define __forceinline__ inline
#endif

#if !defined(__CUDACC_RTC__)
#include <cstdint>
#endif

namespace fgemm {

#if defined(__CUDACC_RTC__)
// NVRTC compiles without the system headers: the fixed-width types, as the host's ABI lays them out.
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef int int32_t;
typedef long long int64_t;
#else
using std::int32_t;
using std::int64_t;
using std::uint16_t;
using std::uint32_t;
using std::uint64_t;
using std::uint8_t;
#endif

// a / b rounded up, in the type of a.
template <typename T, typename U>
__host__ __device__ constexpr T ceil_div(T a, U b) {
  return (a + static_cast<T>(b) - 1) / static_cast<T>(b);
}

template <typename T>
__host__ __device__ constexpr T min_of(T a, T b) {
  return a < b ? a : b;
}

}  // namespace fgemm
