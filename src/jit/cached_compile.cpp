#include "jit/cached_compile.hpp"

#include <atomic>
#include <cstdint>

#include "core/log.hpp"
#include "jit/environment.hpp"

namespace fgemm::jit {
namespace {

// Changing what a cache file holds or how keys are made: bump this, and old entries are never used.
constexpr std::string_view kKeyScheme = "fgemm jit cache key v1";

// Each field is preceded by its length, so that no two different sequences of fields hash alike.
void add_field(Sha256& hash, std::string_view field) {
  const std::uint64_t size = field.size();
  hash.update(&size, sizeof(size));
  hash.update(field);
}

}  // namespace

Digest cache_key(const KernelSpec& spec, const Toolchain& toolchain,
                 const std::vector<EmbeddedHeader>& headers) {
  Sha256 hash;
  add_field(hash, kKeyScheme);
  add_field(hash, to_string(toolchain.compiler));
  add_field(hash, toolchain.version);
  add_field(hash, std::to_string(toolchain.flags.size()));
  for (const std::string& flag : toolchain.flags) add_field(hash, flag);
  add_field(hash, spec.name);
  add_field(hash, spec.source);
  add_field(hash, std::to_string(headers.size()));
  for (const EmbeddedHeader& header : headers) {
    add_field(hash, header.name);
    add_field(hash, header.text);
  }
  return hash.finish();
}

CachedCompile compile_cached(const KernelSpec& spec, const Toolchain& toolchain,
                             const std::vector<EmbeddedHeader>& headers, const DiskCache& cache) {
  const Digest key = cache_key(spec, toolchain, headers);
  if (std::optional<CompileResult> cached = cache.load(key)) {
    debug_log("cache hit for " + spec.name + ": " + cache.entry_path(key));
    return {std::move(*cached), true};
  }
  debug_log("cache miss for " + spec.name + ": " + cache.entry_path(key));
  CachedCompile compiled{compile(spec, toolchain, headers), false};
  if (!cache.store(key, compiled.result)) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true))
      detail::log(detail::LogLevel::Warning,
                  "fgemm: warning: cannot write the kernel cache in " + cache.directory() +
                      " (set FGEMM_CACHE_DIR to a writable directory); kernels are compiled again in every process");
  }
  return compiled;
}

}  // namespace fgemm::jit
