// The resource usage ptxas reports for a kernel (its -v output).
#pragma once

#include <string>

namespace fgemm::jit {

struct PtxasStats {
  int registers = 0;  // per thread
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int stack_frame_bytes = 0;
  int shared_memory_bytes = 0;  // static shared memory; the dynamic part is the launch's
};

// Reads the statistics of entry function `kernel_name` from a compiler log that holds ptxas's verbose
// output. Throws fgemm::Error(Runtime) when the log does not report that kernel (a name that is not an
// extern "C" __global__ function of the source, for example).
PtxasStats parse_ptxas_stats(const std::string& log, const std::string& kernel_name);

// "168 registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack frame, 1024 bytes shared memory"
std::string to_string(const PtxasStats& stats);

}  // namespace fgemm::jit
