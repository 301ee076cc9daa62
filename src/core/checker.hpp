// Checks of one operation's arguments, each failing with an fgemm::Error whose message names the operation,
// the argument, what was expected and what was given (docs/ARCHITECTURE.md, Semantics).
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fgemm/error.hpp"
#include "fgemm/fgemm.hpp"
#include "fgemm/tensor.hpp"

namespace fgemm::detail {

inline constexpr std::int64_t kTmaStrideBytes = 16;  // TMA's rule: every stride except the innermost

inline std::string shape_of(std::initializer_list<std::int64_t> dims) {
  std::ostringstream out;
  out << "[";
  bool first = true;
  for (auto dim : dims) {
    out << (first ? "" : ", ") << dim;
    first = false;
  }
  out << "]";
  return out.str();
}

// Checks of one operation's arguments; every message starts with the operation and the argument.
class Checker {
 public:
  explicit Checker(const char* op) : op_(op) {}

  [[noreturn]] void fail(ErrorKind kind, const char* arg, const std::string& what) const {
    throw Error(kind, std::string("fgemm.") + op_ + ": argument '" + arg + "' " + what);
  }

  void present(const TensorView& t, const char* arg) const {
    if (t.data == nullptr && t.numel() > 0) fail(ErrorKind::InvalidValue, arg, "has a null data pointer");
  }

  void dtype(const TensorView& t, const char* arg, DType expected) const {
    if (t.dtype != expected)
      fail(ErrorKind::InvalidType, arg,
           std::string("expected dtype ") + dtype_name(expected) + ", got " + dtype_name(t.dtype));
  }

  void shape(const TensorView& t, const char* arg, std::initializer_list<std::int64_t> expected,
             const char* meaning) const {
    bool same = t.ndim == static_cast<int>(expected.size());
    int i = 0;
    for (auto dim : expected) same = same && t.shape[i++] == dim;
    if (!same)
      fail(ErrorKind::InvalidValue, arg,
           std::string("expected shape ") + shape_of(expected) + " (" + meaning + "), got " + shape_string(t));
  }

  void ndim(const TensorView& t, const char* arg, int expected, const char* meaning) const {
    if (t.ndim != expected)
      fail(ErrorKind::InvalidValue, arg,
           "expected a " + std::to_string(expected) + "-D tensor " + meaning + ", got shape " + shape_string(t));
  }

  // Innermost dimension contiguous, every other stride a multiple of 16 bytes and not negative.
  void tma_strides(const TensorView& t, const char* arg) const {
    if (t.shape[t.ndim - 1] > 1 && t.strides[t.ndim - 1] != 1)
      fail(ErrorKind::InvalidValue, arg,
           "must be contiguous in its last dimension (stride 1), got strides " + strides_of(t));
    for (int i = 0; i + 1 < t.ndim; ++i) {
      std::int64_t bytes = t.strides[i] * static_cast<std::int64_t>(dtype_size(t.dtype));
      if (t.strides[i] < 0 || bytes % kTmaStrideBytes != 0)
        fail(ErrorKind::InvalidValue, arg,
             "needs every stride but the last to be a non-negative multiple of 16 bytes (a rule of the GPU's "
             "tensor memory accelerator, applied on every backend), got strides " +
                 strides_of(t) + " of " + std::to_string(dtype_size(t.dtype)) + "-byte elements");
    }
    if (reinterpret_cast<std::uintptr_t>(t.data) % kTmaStrideBytes != 0)
      fail(ErrorKind::InvalidValue, arg, "must start at an address aligned to 16 bytes");
  }

  void nonnegative_sizes(const TensorView& t, const char* arg) const {
    for (int i = 0; i < t.ndim; ++i)
      if (t.shape[i] < 0) fail(ErrorKind::InvalidValue, arg, "has a negative size: shape " + shape_string(t));
  }

  // Outer strides at least as large as the inner extent they step over, so no two elements share memory:
  // several threads write an output, and overlapping elements would leave the result to the order of writes.
  void non_overlapping(const TensorView& t, const char* arg) const {
    for (int i = 0; i + 1 < t.ndim; ++i)
      if (t.shape[i] > 1 && t.strides[i] < t.shape[i + 1] * t.strides[i + 1])
        fail(ErrorKind::InvalidValue, arg,
             "has overlapping elements: shape " + shape_string(t) + " with strides " + strides_of(t));
  }

  // No element of `written` shares memory with one of `other` (their byte ranges are apart).
  void disjoint(const TensorView& written, const char* written_arg, const TensorView& other,
                const char* other_arg) const {
    if (overlap(written, other))
      fail(ErrorKind::InvalidValue, written_arg, std::string("must not overlap '") + other_arg + "' in memory");
  }

  void nonnegative_strides(const TensorView& t, const char* arg) const {
    for (int i = 0; i < t.ndim; ++i)
      if (t.strides[i] < 0) fail(ErrorKind::InvalidValue, arg, "must not have negative strides, got " + strides_of(t));
  }

  void contiguous_vector(const TensorView& t, const char* arg) const {
    if (t.ndim == 1 && t.shape[0] > 1 && t.strides[0] != 1)
      fail(ErrorKind::InvalidValue, arg, "must be contiguous, got stride " + std::to_string(t.strides[0]));
  }

  void same_device(const TensorView& t, const char* arg, const Device& device) const {
    if (t.device != device)
      fail(ErrorKind::InvalidValue, arg,
           "is on " + device_name(t.device) + " but 'a' is on " + device_name(device) +
               "; all tensors of one call must be on the same device");
  }

  static std::string strides_of(const TensorView& t) {
    std::ostringstream out;
    out << "(";
    for (int i = 0; i < t.ndim; ++i) out << (i ? ", " : "") << t.strides[i];
    out << (t.ndim == 1 ? ",)" : ")");
    return out.str();
  }

  // m_indices, masked_m, psum, ks: contiguous int32 vectors on the device of the other operands.
  void index_vector(const TensorView& t, const char* arg, std::int64_t length, const char* meaning,
                    const Device& device) const {
    dtype(t, arg, DType::I32);
    shape(t, arg, {length}, meaning);
    present(t, arg);
    same_device(t, arg, device);
    contiguous_vector(t, arg);
  }

  // The host's counts of the experts' rows in a k-grouped layout: each a non-negative multiple of 128, adding up to
  // the `rows` of the tensors named in `rows_of` ("x has", "a and b have").
  void expert_counts(const std::vector<std::int64_t>& ks, std::int64_t rows, const char* rows_of) const {
    aligned_counts(ks);
    const std::int64_t sum = std::accumulate(ks.begin(), ks.end(), std::int64_t(0));
    if (sum != rows)
      fail(ErrorKind::InvalidValue, "ks",
           "sums to " + std::to_string(sum) + ", but " + rows_of + " " + std::to_string(rows) + " rows");
  }

  // ks: each a non-negative multiple of kMAlignmentForContiguousLayout (128).
  void aligned_counts(const std::vector<std::int64_t>& ks) const {
    for (std::size_t g = 0; g < ks.size(); ++g)
      if (ks[g] < 0 || ks[g] % kMAlignmentForContiguousLayout != 0)
        fail(ErrorKind::InvalidValue, "ks",
             "expected counts that are non-negative multiples of " + std::to_string(kMAlignmentForContiguousLayout) +
                 ", got ks[" + std::to_string(g) + "] = " + std::to_string(ks[g]));
  }

  // ks: one count per expert of d.
  void count_per_expert(const std::vector<std::int64_t>& ks, std::int64_t groups) const {
    if (static_cast<std::int64_t>(ks.size()) != groups)
      fail(ErrorKind::InvalidValue, "ks",
           "expected one count per expert of d (" + std::to_string(groups) + "), got " + std::to_string(ks.size()));
  }

  // The dimensions of an M-grouped layout, read from A and B and checked against each other (their ranks, at
  // least one group, B's shape, N >= 1). Contiguous: A [M_sum, K], B [G, N, K] ([G, K, N] where B is MN-major);
  // masked: A [G, M_max, K], B [G, N, K].
  struct GroupedDims {
    std::int64_t groups, m, n, k;
  };

  GroupedDims contiguous_dims(const TensorView& a, const TensorView& b, bool b_mn_major = false) const {
    ndim(a, "a", 2, "[M_sum, K]");
    ndim(b, "b", 3, b_mn_major ? "[G, K, N]" : "[G, N, K]");
    const GroupedDims dims{b.shape[0], a.shape[0], b.shape[b_mn_major ? 2 : 1], a.shape[1]};
    if (dims.groups < 1) fail(ErrorKind::InvalidValue, "b", "needs at least one group (G >= 1)");
    if (b_mn_major)
      shape(b, "b", {dims.groups, dims.k, dims.n}, "[G, K, N] with the K of a");
    else
      shape(b, "b", {dims.groups, dims.n, dims.k}, "[G, N, K] with the K of a");
    at_least_one_column(dims.n);
    return dims;
  }

  GroupedDims masked_dims(const TensorView& a, const TensorView& b) const {
    ndim(a, "a", 3, "[G, M_max, K]");
    ndim(b, "b", 3, "[G, N, K]");
    const GroupedDims dims{a.shape[0], a.shape[1], b.shape[1], a.shape[2]};
    if (dims.groups < 1) fail(ErrorKind::InvalidValue, "a", "needs at least one group (G >= 1)");
    shape(b, "b", {dims.groups, dims.n, dims.k}, "[G, N, K] with the G and K of a");
    at_least_one_column(dims.n);
    return dims;
  }

  // N, B's rows or columns: at least one.
  void at_least_one_column(std::int64_t n) const {
    if (n < 1) fail(ErrorKind::InvalidValue, "b", "needs N >= 1, got N = " + std::to_string(n));
  }

  // The masked layout's counts on the device and the host's hint of them.
  void masked_counts(const TensorView& masked_m, std::int64_t groups, std::int64_t expected_m,
                     const Device& device) const {
    index_vector(masked_m, "masked_m", groups, "[G], the rows to compute in each group", device);
    if (expected_m <= 0)
      fail(ErrorKind::InvalidValue, "expected_m",
           "must be a positive hint of the rows per group, got " + std::to_string(expected_m));
  }

  // C: of D's shape, FP32 or D's own type (BF16 or FP16, as DeepGEMM's C = D), on D's device, with the strides
  // the TMA takes.
  void accumulator_input(const std::optional<TensorView>& c, const TensorView& d) const {
    if (!c) return;
    const bool sixteen_bit_d = d.dtype == DType::BF16 || d.dtype == DType::F16;
    if (c->dtype != DType::F32 && !(sixteen_bit_d && c->dtype == d.dtype)) {
      const std::string expected = sixteen_bit_d ? std::string("float32 or d's ") + dtype_name(d.dtype) : "float32";
      fail(ErrorKind::InvalidType, "c", "expected dtype " + expected + ", got " + dtype_name(c->dtype));
    }
    present(*c, "c");
    same_device(*c, "c", d.device);
    if (c->ndim != d.ndim || !std::equal(c->shape, c->shape + c->ndim, d.shape))
      fail(ErrorKind::InvalidValue, "c",
           "expected the shape of d, " + shape_string(d) + ", got " + shape_string(*c));
    tma_strides(*c, "c");
    // C is D itself (accumulation in place: each element of C is read before that element of D is written), or
    // apart from it: the tiles of D are written in any order, so a C that overlaps D elsewhere would be read
    // partly overwritten.
    const bool c_is_d =
        c->data == d.data && c->dtype == d.dtype && std::equal(c->strides, c->strides + c->ndim, d.strides);
    if (!c_is_d && overlap(*c, d))
      fail(ErrorKind::InvalidValue, "c", "must be d itself (the same data and strides) or not overlap d in memory");
  }

 private:
  // The bytes from the first to one past the last element of a non-empty tensor with non-negative strides.
  static std::pair<std::uintptr_t, std::uintptr_t> byte_range(const TensorView& t) {
    std::int64_t last = 0;
    for (int i = 0; i < t.ndim; ++i) last += (t.shape[i] - 1) * t.strides[i];
    const auto first = reinterpret_cast<std::uintptr_t>(t.data);
    return {first, first + static_cast<std::uintptr_t>((last + 1) * static_cast<std::int64_t>(dtype_size(t.dtype)))};
  }

  // Whether two tensors' byte ranges meet (never for an empty one).
  static bool overlap(const TensorView& a, const TensorView& b) {
    if (a.numel() == 0 || b.numel() == 0) return false;
    const auto [first, end] = byte_range(a);
    const auto [other_first, other_end] = byte_range(b);
    return first < other_end && other_first < end;
  }

  const char* op_;
};

}  // namespace fgemm::detail
