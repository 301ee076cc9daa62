// Running the CUDA toolkit's programs (nvcc, cuobjdump) as child processes.
#pragma once

#include <string>
#include <vector>

namespace fgemm::jit {

struct ProcessResult {
  int exit_code = 0;   // -1 when the program was ended by a signal
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] (a path) with the arguments argv[1...] and waits for it. Throws fgemm::Error(Runtime)
// when it cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv);

bool is_executable_file(const std::string& path);

// The path of the toolkit program `name` in $CUDA_HOME/bin, on PATH or in /usr/local/cuda/bin (the first
// found), or "" where there is none.
std::string find_cuda_tool(const std::string& name);

// A new private directory under the system's temporary directory, removed with everything in it when
// the object is destroyed.
class TemporaryDirectory {
 public:
  TemporaryDirectory();
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes `size` bytes to the file `path`, replacing it. Throws fgemm::Error(Runtime) on failure.
void write_file(const std::string& path, const void* data, std::size_t size);

}  // namespace fgemm::jit
