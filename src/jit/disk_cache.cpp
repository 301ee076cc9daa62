#include "jit/disk_cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace fgemm::jit {
namespace {

// An entry file: magic, format version, key, ptxas statistics, cubin and log sizes, the cubin, the log,
// and last the SHA-256 of everything before it.
constexpr char kMagic[8] = {'F', 'G', 'E', 'M', 'M', 'J', 'I', 'T'};
constexpr std::uint32_t kFormatVersion = 1;
constexpr char kElfMagic[4] = {0x7f, 'E', 'L', 'F'};

template <typename Value>
void append(std::string& bytes, const Value& value) {
  bytes.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  bool read(void* destination, std::size_t size) {
    if (bytes_.size() - position_ < size) return false;
    std::memcpy(destination, bytes_.data() + position_, size);
    position_ += size;
    return true;
  }
  template <typename Value>
  bool read(Value& value) {
    return read(&value, sizeof(value));
  }
  std::size_t remaining() const { return bytes_.size() - position_; }

 private:
  std::string_view bytes_;
  std::size_t position_ = 0;
};

std::string serialize(const Digest& key, const CompileResult& result) {
  std::string bytes(kMagic, sizeof(kMagic));
  append(bytes, kFormatVersion);
  append(bytes, key);
  append(bytes, result.ptxas);
  append(bytes, static_cast<std::uint64_t>(result.cubin.size()));
  append(bytes, static_cast<std::uint64_t>(result.log.size()));
  bytes.append(result.cubin.data(), result.cubin.size());
  bytes.append(result.log);
  append(bytes, sha256(bytes));
  return bytes;
}

std::optional<CompileResult> deserialize(const std::string& bytes, const Digest& expected_key) {
  Digest checksum;
  if (bytes.size() < checksum.size()) return std::nullopt;
  const std::string_view body(bytes.data(), bytes.size() - checksum.size());
  std::memcpy(checksum.data(), bytes.data() + body.size(), checksum.size());
  if (sha256(body) != checksum) return std::nullopt;

  Reader reader(body);
  char magic[sizeof(kMagic)];
  std::uint32_t version = 0;
  Digest key;
  CompileResult result;
  std::uint64_t cubin_size = 0;
  std::uint64_t log_size = 0;
  if (!reader.read(magic, sizeof(magic)) || std::memcmp(magic, kMagic, sizeof(kMagic)) != 0)
    return std::nullopt;
  if (!reader.read(version) || version != kFormatVersion) return std::nullopt;
  if (!reader.read(key) || key != expected_key) return std::nullopt;
  if (!reader.read(result.ptxas) || !reader.read(cubin_size) || !reader.read(log_size)) return std::nullopt;
  if (cubin_size < sizeof(kElfMagic) || cubin_size > reader.remaining() ||
      log_size != reader.remaining() - cubin_size)
    return std::nullopt;
  result.cubin.resize(cubin_size);
  result.log.resize(log_size);
  reader.read(result.cubin.data(), cubin_size);
  reader.read(result.log.data(), log_size);
  if (std::memcmp(result.cubin.data(), kElfMagic, sizeof(kElfMagic)) != 0) return std::nullopt;
  return result;
}

bool write_all(int descriptor, const std::string& bytes) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t count = write(descriptor, bytes.data() + written, bytes.size() - written);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) return false;
    written += static_cast<std::size_t>(count);
  }
  return true;
}

}  // namespace

DiskCache::DiskCache(std::string directory) : directory_(std::move(directory)) {}

DiskCache DiskCache::from_environment() {
  // FGEMM_CACHE_DIR: where compiled kernels are kept across processes (default ~/.cache/fgemm).
  if (const char* directory = std::getenv("FGEMM_CACHE_DIR"); directory != nullptr && *directory != '\0')
    return DiskCache(directory);
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return DiskCache(std::string(home) + "/.cache/fgemm");
  return DiskCache((std::filesystem::temp_directory_path() / "fgemm-cache").string());
}

std::string DiskCache::entry_path(const Digest& key) const {
  return directory_ + "/" + to_hex(key) + ".kernel";
}

std::optional<CompileResult> DiskCache::load(const Digest& key) const {
  std::ifstream file(entry_path(key), std::ios::binary);
  if (!file) return std::nullopt;
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) return std::nullopt;
  return deserialize(bytes, key);
}

bool DiskCache::store(const Digest& key, const CompileResult& result) const {
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) return false;
  std::string temporary = entry_path(key) + ".tmp-XXXXXX";
  const int descriptor = mkstemp(temporary.data());
  if (descriptor < 0) return false;
  fchmod(descriptor, 0644);  // mkstemp's 0600 would hide the entry from others sharing the directory
  const bool written = write_all(descriptor, serialize(key, result));
  const bool closed = close(descriptor) == 0;
  if (!written || !closed || std::rename(temporary.c_str(), entry_path(key).c_str()) != 0) {
    std::remove(temporary.c_str());
    return false;
  }
  return true;
}

}  // namespace fgemm::jit
