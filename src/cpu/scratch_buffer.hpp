// Working memory that is allocated once and reused by later calls.
#pragma once

#include <cstddef>
#include <vector>

namespace fgemm::cpu {

// A buffer that grows to the largest size asked of it and never shrinks, aligned to a cache line (64 bytes,
// enough for any vector load).
class ScratchBuffer {
 public:
  // At least `bytes` bytes; the contents are left as they were (or undefined after growing).
  void* get(std::size_t bytes) {
    const std::size_t lines = (bytes + sizeof(CacheLine) - 1) / sizeof(CacheLine);
    if (lines_.size() < lines) lines_.resize(lines);
    return lines_.data();
  }

  template <class T>
  T* get(std::size_t count) {
    return static_cast<T*>(get(count * sizeof(T)));
  }

 private:
  struct alignas(64) CacheLine {
    unsigned char bytes[64];
  };

  std::vector<CacheLine> lines_;
};

}  // namespace fgemm::cpu
