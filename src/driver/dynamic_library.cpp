#include "driver/dynamic_library.hpp"

#include <dlfcn.h>

namespace fgemm::driver {

void* open_library(const std::string& name, std::string& error) {
  void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* reason = dlerror();
    error = reason != nullptr ? reason : "unknown error";
  }
  return library;
}

void* find_symbol(void* library, const char* symbol) { return dlsym(library, symbol); }

std::string library_file_of(const void* address) {
  Dl_info info{};
  return dladdr(address, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "";
}

}  // namespace fgemm::driver
