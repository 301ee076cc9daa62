// NVRTC, the run-time CUDA compiler, opened at run time: from the CUDA toolkit or from NVIDIA's
// nvidia-cuda-nvrtc Python wheel.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fgemm::driver {

// Names and values as in nvrtc.h (checked by tests/cpp/test_driver_abi.cpp).
enum nvrtcResult : int {
  NVRTC_SUCCESS = 0,
};
struct NvrtcProgramState;  // opaque
using nvrtcProgram = NvrtcProgramState*;

struct Nvrtc {
  std::string path;  // the file of the library that was loaded
  int major = 0;     // NVRTC's version
  int minor = 0;

  nvrtcResult (*nvrtcVersion)(int* major, int* minor) = nullptr;
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram* program, const char* source, const char* name,
                                    int header_count, const char* const* headers,
                                    const char* const* include_names) = nullptr;
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram program, int option_count,
                                     const char* const* options) = nullptr;
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram program, std::size_t* size) = nullptr;
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram program, char* log) = nullptr;
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram program, std::size_t* size) = nullptr;
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram program, char* cubin) = nullptr;
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram* program) = nullptr;
  const char* (*nvrtcGetErrorString)(nvrtcResult result) = nullptr;
};

// Adds a directory to search for libnvrtc (the Python package passes the lib directory of the
// nvidia-cuda-nvrtc wheel). Only directories added before NVRTC is first loaded are searched.
void add_nvrtc_search_dir(const std::string& directory);

// The libraries to try, in order: the file named by FGEMM_NVRTC_PATH, libnvrtc in each directory given
// to add_nvrtc_search_dir, in $CUDA_HOME/lib64 and in /usr/local/cuda/lib64, then libnvrtc by file name
// alone for the dynamic loader to find.
std::vector<std::string> nvrtc_candidates();

// Loads the first candidate that opens and has NVRTC's functions. Throws fgemm::Error(Unsupported)
// listing each candidate and why it failed.
Nvrtc load_nvrtc(const std::vector<std::string>& candidates);

// NVRTC from nvrtc_candidates(), loaded on first use; thread-safe. A failure is not remembered, so a
// search directory added later may still be used.
const Nvrtc& nvrtc();

}  // namespace fgemm::driver
