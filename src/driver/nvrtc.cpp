#include "driver/nvrtc.hpp"

#include <cstdlib>
#include <memory>
#include <mutex>

#include "driver/dynamic_library.hpp"
#include "fgemm/error.hpp"

namespace fgemm::driver {
namespace {

// Newest first: a newer NVRTC knows every architecture an older one does.
const char* const kLibraryNames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};

std::mutex& nvrtc_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::vector<std::string>& added_search_dirs() {
  static std::vector<std::string> directories;
  return directories;
}

void append_library_names(std::vector<std::string>& candidates, const std::string& directory) {
  for (const char* name : kLibraryNames) candidates.push_back(directory + "/" + name);
}

template <typename Function>
bool bind(void* library, Function& function, const char* name) {
  function = reinterpret_cast<Function>(find_symbol(library, name));
  return function != nullptr;
}

// Binds NVRTC's functions from `library`; returns false when one is missing.
bool bind_all(void* library, Nvrtc& nvrtc) {
  return bind(library, nvrtc.nvrtcVersion, "nvrtcVersion") &&
         bind(library, nvrtc.nvrtcCreateProgram, "nvrtcCreateProgram") &&
         bind(library, nvrtc.nvrtcCompileProgram, "nvrtcCompileProgram") &&
         bind(library, nvrtc.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize") &&
         bind(library, nvrtc.nvrtcGetProgramLog, "nvrtcGetProgramLog") &&
         bind(library, nvrtc.nvrtcGetCUBINSize, "nvrtcGetCUBINSize") &&
         bind(library, nvrtc.nvrtcGetCUBIN, "nvrtcGetCUBIN") &&
         bind(library, nvrtc.nvrtcDestroyProgram, "nvrtcDestroyProgram") &&
         bind(library, nvrtc.nvrtcGetErrorString, "nvrtcGetErrorString");
}

}  // namespace

void add_nvrtc_search_dir(const std::string& directory) {
  std::lock_guard<std::mutex> lock(nvrtc_mutex());
  added_search_dirs().push_back(directory);
}

std::vector<std::string> nvrtc_candidates() {
  std::vector<std::string> candidates;
  // FGEMM_NVRTC_PATH: the NVRTC library file to use, tried before any other.
  if (const char* path = std::getenv("FGEMM_NVRTC_PATH"); path != nullptr && *path != '\0')
    candidates.push_back(path);
  {
    std::lock_guard<std::mutex> lock(nvrtc_mutex());
    for (const std::string& directory : added_search_dirs()) append_library_names(candidates, directory);
  }
  if (const char* cuda_home = std::getenv("CUDA_HOME"); cuda_home != nullptr && *cuda_home != '\0')
    append_library_names(candidates, std::string(cuda_home) + "/lib64");
  append_library_names(candidates, "/usr/local/cuda/lib64");
  for (const char* name : kLibraryNames) candidates.push_back(name);
  return candidates;
}

Nvrtc load_nvrtc(const std::vector<std::string>& candidates) {
  std::string failures;
  for (const std::string& candidate : candidates) {
    std::string error;
    void* library = open_library(candidate, error);
    Nvrtc nvrtc;
    if (library == nullptr) {
      failures += "\n  " + candidate + ": " + error;
    } else if (!bind_all(library, nvrtc)) {
      failures += "\n  " + candidate + ": opened, but it lacks NVRTC's functions";
    } else if (nvrtc.nvrtcVersion(&nvrtc.major, &nvrtc.minor) != NVRTC_SUCCESS || nvrtc.major < 12) {
      failures += "\n  " + candidate + ": NVRTC " + std::to_string(nvrtc.major) + "." +
                  std::to_string(nvrtc.minor) + " is too old (sm_90a needs 12.0 or newer)";
    } else {
      nvrtc.path = library_file_of(reinterpret_cast<const void*>(nvrtc.nvrtcVersion));
      if (nvrtc.path.empty()) nvrtc.path = candidate;
      return nvrtc;
    }
  }
  throw Error(ErrorKind::Unsupported,
              "fgemm: NVRTC (the CUDA run-time compiler, 12.0 or newer) was not found. Install the CUDA "
              "toolkit or the nvidia-cuda-nvrtc wheel, or set FGEMM_NVRTC_PATH to libnvrtc.so. Tried:" +
                  failures);
}

const Nvrtc& nvrtc() {
  static std::mutex load_mutex;
  static std::unique_ptr<const Nvrtc> loaded;
  std::lock_guard<std::mutex> lock(load_mutex);
  if (loaded == nullptr) loaded = std::make_unique<const Nvrtc>(load_nvrtc(nvrtc_candidates()));
  return *loaded;
}

}  // namespace fgemm::driver
