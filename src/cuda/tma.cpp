#include "cuda/tma.hpp"

#include <array>
#include <cstring>
#include <string>
#include <unordered_map>

#include "driver/cuda_driver.hpp"
#include "fgemm/error.hpp"

namespace fgemm::cuda {
namespace {

driver::CUtensorMapDataType data_type(int element_bytes) {
  switch (element_bytes) {
    case 1: return driver::CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case 2: return driver::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case 4: return driver::CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  }
  throw Error(ErrorKind::Runtime, "fgemm: no tensor map type for " + std::to_string(element_bytes) + "-byte elements");
}

driver::CUtensorMapSwizzle swizzle_mode(int swizzle_bytes) {
  switch (swizzle_bytes) {
    case 0: return driver::CU_TENSOR_MAP_SWIZZLE_NONE;
    case 32: return driver::CU_TENSOR_MAP_SWIZZLE_32B;
    case 64: return driver::CU_TENSOR_MAP_SWIZZLE_64B;
    case 128: return driver::CU_TENSOR_MAP_SWIZZLE_128B;
  }
  throw Error(ErrorKind::Runtime, "fgemm: no TMA swizzle of " + std::to_string(swizzle_bytes) + " bytes");
}

driver::CUtensorMap encode(const MatrixBox& matrix, const char* what) {
  driver::CUtensorMap map{};
  const auto bytes = static_cast<std::uint64_t>(matrix.element_bytes);
  const std::uint32_t rank = matrix.groups == 0 ? 2 : 3;
  const std::uint64_t sizes[3] = {matrix.cols, matrix.rows, matrix.groups};
  const std::uint64_t strides[2] = {matrix.row_stride * bytes, matrix.group_stride * bytes};
  const std::uint32_t box[3] = {matrix.box_cols, matrix.box_rows, 1};
  const std::uint32_t element_strides[3] = {1, 1, 1};
  const auto& cuda = driver::cuda();
  driver::check(cuda.cuTensorMapEncodeTiled(&map, data_type(matrix.element_bytes), rank, const_cast<void*>(matrix.data),
                                            sizes, strides, box, element_strides, driver::CU_TENSOR_MAP_INTERLEAVE_NONE,
                                            swizzle_mode(matrix.swizzle_bytes),
                                            driver::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                            driver::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                what);
  return map;
}

}  // namespace

// Encoding costs about a microsecond, a noticeable part of a small GEMM's host time, and a model calls the
// same GEMMs on the same buffers again and again: each thread remembers the maps it made, by the bytes of
// their MatrixBox (a bounded table, emptied when full).
driver::CUtensorMap make_tensor_map(const MatrixBox& matrix, const char* what) {
  // MatrixBox has no padding and is a whole number of 8-byte words: the key is its words.
  using Key = std::array<std::uint64_t, sizeof(MatrixBox) / 8>;
  static_assert(sizeof(MatrixBox) % 8 == 0, "MatrixBox is a whole number of words");
  struct KeyHash {
    std::size_t operator()(const Key& key) const {
      std::uint64_t hash = 14695981039346656037ull;  // FNV-1a, a word at a time
      for (std::uint64_t word : key) hash = (hash ^ word) * 1099511628211ull;
      return static_cast<std::size_t>(hash ^ (hash >> 32));
    }
  };
  constexpr std::size_t kRemembered = 256;
  thread_local std::unordered_map<Key, driver::CUtensorMap, KeyHash> remembered;
  Key key;
  std::memcpy(key.data(), &matrix, sizeof(MatrixBox));
  const auto found = remembered.find(key);
  if (found != remembered.end()) return found->second;
  if (remembered.size() >= kRemembered) remembered.clear();
  return remembered.emplace(key, encode(matrix, what)).first->second;
}

}  // namespace fgemm::cuda
