// Compiling through the disk cache: a kernel is compiled once per machine, not once per process.
#pragma once

#include <vector>

#include "jit/compiler.hpp"
#include "jit/disk_cache.hpp"
#include "jit/sha256.hpp"

namespace fgemm::jit {

// The hash of everything that determines the cubin: the kernel's name and source, the name and text of
// every header it may include, and the compiler, its version and its flags.
Digest cache_key(const KernelSpec& spec, const Toolchain& toolchain,
                 const std::vector<EmbeddedHeader>& headers);

struct CachedCompile {
  CompileResult result;
  bool cache_hit = false;
};

// The cached entry of `spec`, or else the result of compiling it, which is then stored. A cache that
// cannot be written costs a recompilation in each process, never a failure (one warning says so).
CachedCompile compile_cached(const KernelSpec& spec, const Toolchain& toolchain,
                             const std::vector<EmbeddedHeader>& headers, const DiskCache& cache);

}  // namespace fgemm::jit
