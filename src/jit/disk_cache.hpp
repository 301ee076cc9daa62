// Compiled kernels on disk, one file per cache key, shared by every process of the user.
#pragma once

#include <optional>
#include <string>

#include "jit/compiler.hpp"
#include "jit/sha256.hpp"

namespace fgemm::jit {

class DiskCache {
 public:
  explicit DiskCache(std::string directory);

  // FGEMM_CACHE_DIR, or ~/.cache/fgemm.
  static DiskCache from_environment();

  const std::string& directory() const { return directory_; }
  std::string entry_path(const Digest& key) const;

  // The entry stored under `key`; nothing when there is none, or when it cannot be read or fails
  // verification (format, key, sizes, checksum), so that the kernel is compiled again.
  std::optional<CompileResult> load(const Digest& key) const;

  // Stores `result` under `key`: written to a temporary file in the same directory, then renamed over
  // the entry, so that a concurrent reader sees either no entry or a whole one. Returns false, leaving
  // nothing behind, when the directory cannot be written.
  bool store(const Digest& key, const CompileResult& result) const;

 private:
  std::string directory_;
};

}  // namespace fgemm::jit
