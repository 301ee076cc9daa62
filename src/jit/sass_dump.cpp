#include "jit/sass_dump.hpp"

#include <atomic>

#include "core/log.hpp"
#include "jit/process.hpp"

namespace fgemm::jit {

void dump_sass(const std::string& kernel_name, const std::vector<char>& cubin) {
  const std::string cuobjdump = find_cuda_tool("cuobjdump");
  if (cuobjdump.empty()) {
    static std::atomic<bool> reported{false};
    if (!reported.exchange(true))
      detail::log(detail::LogLevel::Warning,
                  "fgemm jit: FGEMM_DUMP_SASS is set, but cuobjdump was not found in $CUDA_HOME/bin, on PATH or in "
                  "/usr/local/cuda/bin");
    return;
  }
  const TemporaryDirectory directory;
  const std::string file = directory.path() + "/" + kernel_name + ".cubin";
  write_file(file, cubin.data(), cubin.size());
  const ProcessResult result = run_process({cuobjdump, "--dump-sass", file});
  detail::log(detail::LogLevel::Debug, "fgemm jit: SASS of " + kernel_name +
                                           (result.exit_code == 0 ? "" : " (cuobjdump failed)") + ":\n" +
                                           result.output);
}

}  // namespace fgemm::jit
