// Cutting a range of work into nearly equal parts, for the CPU drivers that share it among threads.
#pragma once

#include <cstdint>

namespace fgemm::cpu {

// [0, count) cut into `parts` ranges of nearly equal sizes; calls emit(begin, size) for each.
template <class Emit>
void split_evenly(std::int64_t count, std::int64_t parts, Emit emit) {
  for (std::int64_t i = 0; i < parts; ++i) {
    const std::int64_t begin = count * i / parts, end = count * (i + 1) / parts;
    emit(begin, end - begin);
  }
}

}  // namespace fgemm::cpu
