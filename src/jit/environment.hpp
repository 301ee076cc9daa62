// Switches read from the environment, and the diagnostics they turn on.
#pragma once

#include <string>

namespace fgemm::jit {

// True when the variable is set to anything but "" or "0".
bool environment_flag(const char* name);

// Prints "fgemm jit: <message>" to stderr when FGEMM_JIT_DEBUG is on.
void debug_log(const std::string& message);

}  // namespace fgemm::jit
