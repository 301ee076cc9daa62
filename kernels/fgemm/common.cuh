// Basic types and helpers shared by every kernel. NVRTC compiles these headers with no system headers.
// The scheduling headers also compile as plain C++, so that the host tests can run them on the CPU.
#pragma once

#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
#define __host__
#define __device__
#define __forceinline__ inline
#endif

namespace fgemm {

typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef int int32_t;
typedef long long int64_t;

template <typename T>
__host__ __device__ constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

template <typename T>
__host__ __device__ constexpr T min_of(T a, T b) {
  return a < b ? a : b;
}

}  // namespace fgemm
