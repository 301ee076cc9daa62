// FGEMM_DUMP_SASS: the machine code of each newly compiled kernel, printed for inspection.
#pragma once

#include <string>
#include <vector>

namespace fgemm::jit {

// Prints the SASS of `cubin` to stderr, disassembled by the toolkit's cuobjdump; where cuobjdump is not
// installed, says so (once per process).
void dump_sass(const std::string& kernel_name, const std::vector<char>& cubin);

}  // namespace fgemm::jit
