#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "jit/cached_compile.hpp"
#include "jit/process.hpp"
#include "test_jit_support.hpp"

namespace fgemm::jit {
namespace {

class JitDiskCache : public testing::Test {
 protected:
  const TemporaryDirectory directory_;
  const DiskCache cache_{directory_.path() + "/cache"};
  const Toolchain nvrtc_ = find_toolchain(Compiler::Nvrtc);
  const KernelSpec spec_ = test::sm90a_kernel();
  const std::vector<EmbeddedHeader>& headers_ = embedded_kernel_headers();
  const std::string changed_text_ = std::string(headers_.at(0).text) + "\n// changed\n";

  Digest key() const { return cache_key(spec_, nvrtc_, headers_); }

  // The library's headers with a comment appended to the first.
  std::vector<EmbeddedHeader> changed_headers() const {
    std::vector<EmbeddedHeader> changed = headers_;
    changed[0].text = changed_text_.c_str();
    return changed;
  }

  void overwrite_entry(const std::string& bytes) const {
    std::ofstream(cache_.entry_path(key()), std::ios::binary | std::ios::trunc) << bytes;
  }

  std::string entry_bytes() const {
    std::ifstream file(cache_.entry_path(key()), std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  }

  // Files in the cache directory other than entries (left-over temporary files).
  int stray_files() const {
    int count = 0;
    for (const auto& file : std::filesystem::directory_iterator(cache_.directory()))
      count += file.path().extension() != ".kernel";
    return count;
  }
};

TEST_F(JitDiskCache, TheKeyCoversEverythingThatShapesTheCubin) {
  const Digest base = key();
  EXPECT_EQ(cache_key(spec_, nvrtc_, headers_), base);

  Toolchain other_flags = nvrtc_;
  other_flags.flags.push_back("-lineinfo");
  EXPECT_NE(cache_key(spec_, other_flags, headers_), base);

  Toolchain other_version = nvrtc_;
  other_version.version += ".1";
  EXPECT_NE(cache_key(spec_, other_version, headers_), base);

  Toolchain other_compiler = nvrtc_;
  other_compiler.compiler = Compiler::Nvcc;
  EXPECT_NE(cache_key(spec_, other_compiler, headers_), base);

  EXPECT_NE(cache_key(spec_, nvrtc_, changed_headers()), base);

  KernelSpec other_source = spec_;
  other_source.source += "\n";
  EXPECT_NE(cache_key(other_source, nvrtc_, headers_), base);

  // Fields are delimited: moving characters from one to the next changes the key.
  EXPECT_NE(cache_key(KernelSpec{"ab", "c", 0}, nvrtc_, headers_),
            cache_key(KernelSpec{"a", "bc", 0}, nvrtc_, headers_));
}

TEST_F(JitDiskCache, TheSecondCompileIsAHit) {
  const CachedCompile first = compile_cached(spec_, nvrtc_, headers_, cache_);
  EXPECT_FALSE(first.cache_hit);
  EXPECT_TRUE(std::filesystem::exists(cache_.entry_path(key())));

  const CachedCompile second = compile_cached(spec_, nvrtc_, headers_, cache_);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.result.cubin, first.result.cubin);
  EXPECT_EQ(second.result.log, first.result.log);
  EXPECT_EQ(second.result.ptxas.registers, first.result.ptxas.registers);
  EXPECT_EQ(stray_files(), 0);
}

TEST_F(JitDiskCache, ADifferentHeaderOrFlagMisses) {
  compile_cached(spec_, nvrtc_, headers_, cache_);

  EXPECT_FALSE(compile_cached(spec_, nvrtc_, changed_headers(), cache_).cache_hit);

  Toolchain line_info = nvrtc_;
  line_info.flags.push_back("-lineinfo");
  EXPECT_FALSE(compile_cached(spec_, line_info, headers_, cache_).cache_hit);
  EXPECT_TRUE(compile_cached(spec_, line_info, headers_, cache_).cache_hit);
}

TEST_F(JitDiskCache, ADamagedEntryIsRecompiledAndReplaced) {
  const CompileResult compiled = compile_cached(spec_, nvrtc_, headers_, cache_).result;
  const std::string good = entry_bytes();
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 1;
  const std::vector<std::string> damaged = {"", "garbage", good.substr(0, good.size() / 2), flipped};
  for (const std::string& bytes : damaged) {
    overwrite_entry(bytes);
    EXPECT_FALSE(cache_.load(key()).has_value());
    EXPECT_FALSE(compile_cached(spec_, nvrtc_, headers_, cache_).cache_hit);
    const std::optional<CompileResult> replaced = cache_.load(key());
    ASSERT_TRUE(replaced.has_value());
    EXPECT_EQ(replaced->cubin, compiled.cubin);
  }
}

TEST_F(JitDiskCache, AnEntryOfAnotherKeyIsNotTrusted) {
  compile_cached(spec_, nvrtc_, headers_, cache_);
  const KernelSpec other{"fgemm_test_other", spec_.source, 0};
  std::filesystem::copy_file(cache_.entry_path(key()), cache_.entry_path(cache_key(other, nvrtc_, headers_)));
  EXPECT_FALSE(cache_.load(cache_key(other, nvrtc_, headers_)).has_value());
}

TEST_F(JitDiskCache, ThreadsRacingOnOneKeyLeaveOneValidEntry) {
  std::vector<std::thread> threads;
  std::vector<CachedCompile> results(2);
  for (std::size_t i = 0; i < results.size(); ++i)
    threads.emplace_back([&, i] { results[i] = compile_cached(spec_, nvrtc_, headers_, cache_); });
  for (std::thread& thread : threads) thread.join();
  for (const CachedCompile& result : results) EXPECT_FALSE(result.result.cubin.empty());
  const std::optional<CompileResult> stored = cache_.load(key());
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->cubin, results[0].result.cubin);
  EXPECT_EQ(stray_files(), 0);
}

TEST_F(JitDiskCache, AnUnwritableCacheStillCompiles) {
  const std::string not_a_directory = directory_.path() + "/file";
  std::ofstream(not_a_directory) << "a file where the cache directory would be";
  const DiskCache unwritable(not_a_directory);
  testing::internal::CaptureStderr();
  const CachedCompile compiled = compile_cached(spec_, nvrtc_, headers_, unwritable);
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(compiled.cache_hit);
  EXPECT_FALSE(compiled.result.cubin.empty());
  EXPECT_FALSE(unwritable.store(key(), compiled.result));
  EXPECT_NE(printed.find("cannot write the kernel cache"), std::string::npos) << printed;
}

TEST(JitDiskCacheLocation, FollowsFgemmCacheDirThenHome) {
  {
    const test::ScopedEnvironment cache_dir("FGEMM_CACHE_DIR", "/some/cache");
    EXPECT_EQ(DiskCache::from_environment().directory(), "/some/cache");
  }
  const test::ScopedEnvironment no_cache_dir("FGEMM_CACHE_DIR", nullptr);
  const test::ScopedEnvironment home("HOME", "/home/someone");
  EXPECT_EQ(DiskCache::from_environment().directory(), "/home/someone/.cache/fgemm");
}

}  // namespace
}  // namespace fgemm::jit
