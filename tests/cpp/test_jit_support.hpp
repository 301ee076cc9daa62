// What the driver and JIT tests share: a kernel to compile, environment variables set for a scope, and
// helpers to look at errors.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "fgemm/error.hpp"
#include "jit/kernel_spec.hpp"

namespace fgemm::test {

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The fgemm::Error that `action` throws; when it throws none, a test failure and an empty error.
template <typename Action>
Error thrown_error(Action&& action) {
  try {
    action();
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "no fgemm::Error was thrown";
  return Error(ErrorKind::Runtime, "");
}

// Includes a library header and uses wgmma.fence, an instruction that exists only on sm_90a.
inline jit::KernelSpec sm90a_kernel() {
  return {"fgemm_test_sm90a", R"(#include "fgemm/common.cuh"

extern "C" __global__ void __launch_bounds__(128, 1) fgemm_test_sm90a(float* out, int n) {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<float>(fgemm::ceil_div(i, 4));
}
)",
          0};
}

// Sets (or, given nullptr, unsets) an environment variable until the end of the scope.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const char* value) : name_(name) {
    if (const char* previous = std::getenv(name)) previous_ = previous;
    if (value != nullptr)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnvironment() {
    if (previous_)
      setenv(name_.c_str(), previous_->c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  std::string name_;
  std::optional<std::string> previous_;
};

}  // namespace fgemm::test
