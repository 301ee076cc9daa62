// Opening shared libraries at run time. Libraries stay loaded until the process ends: their functions
// may be called from anywhere until then, and unloading the driver during exit is unsafe.
#pragma once

#include <string>

namespace fgemm::driver {

// Opens `name` (a path, or a file name for the dynamic loader to find). Returns nullptr on failure and
// sets `error` to the loader's explanation.
void* open_library(const std::string& name, std::string& error);

// The address of `symbol` in `library`, or nullptr when it has none.
void* find_symbol(void* library, const char* symbol);

// The file of the loaded library that holds `address`, or "" when no library holds it.
std::string library_file_of(const void* address);

}  // namespace fgemm::driver
