#include "jit/environment.hpp"

#include <cstdlib>
#include <cstring>

#include "core/log.hpp"

namespace fgemm::jit {

bool environment_flag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}

void debug_log(const std::string& message) {
  // FGEMM_JIT_DEBUG: report each kernel's cache hit or miss, compiler command and compile time.
  if (environment_flag("FGEMM_JIT_DEBUG")) detail::log(detail::LogLevel::Debug, "fgemm jit: " + message);
}

}  // namespace fgemm::jit
