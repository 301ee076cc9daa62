#include "core/quantize_validate.hpp"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fgemm/error.hpp"

namespace fgemm::detail {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::string strides_string(const TensorView& t) {
  std::ostringstream out;
  out << "(";
  for (int i = 0; i < t.ndim; ++i) out << (i ? ", " : "") << t.strides[i];
  out << (t.ndim == 1 ? ",)" : ")");
  return out.str();
}

// The bytes from the first to one past the last element of a non-empty tensor with non-negative strides.
std::pair<std::uintptr_t, std::uintptr_t> byte_range(const TensorView& t) {
  std::int64_t last = 0;
  for (int i = 0; i < t.ndim; ++i) last += (t.shape[i] - 1) * t.strides[i];
  const auto first = reinterpret_cast<std::uintptr_t>(t.data);
  return {first, first + static_cast<std::uintptr_t>((last + 1) * static_cast<std::int64_t>(dtype_size(t.dtype)))};
}

// Whether no two elements share memory: with the dimensions ordered by stride, each stride steps over all
// the elements of the dimensions before it. (A sufficient rule, met by every dense layout and its slices.)
bool elements_are_distinct(const TensorView& t) {
  std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // (stride, size) of dimensions of size > 1
  for (int i = 0; i < t.ndim; ++i)
    if (t.shape[i] > 1) dims.emplace_back(t.strides[i], t.shape[i]);
  std::sort(dims.begin(), dims.end());
  std::int64_t covered = 1;  // elements a step must clear
  for (const auto& [stride, size] : dims) {
    if (stride < covered) return false;
    covered = stride * size;
  }
  return true;
}

enum class Access { Read, Write };
enum class Rows { Contiguous, AnyLayout };

// The checks of one call; every message starts with the operation and the argument.
class CallChecks {
 public:
  CallChecks(const char* op, const Device& device) : op_(op), device_(device) {}

  [[noreturn]] void fail(ErrorKind kind, const char* arg, const std::string& what) const {
    throw Error(kind, std::string("fgemm.") + op_ + ": argument '" + arg + "' " + what);
  }

  // The shape of `t` is that of `expected` (a view of no data).
  void shape(const TensorView& t, const char* arg, const TensorView& expected, const std::string& meaning) const {
    bool same = t.ndim == expected.ndim;
    for (int i = 0; same && i < t.ndim; ++i) same = t.shape[i] == expected.shape[i];
    if (!same)
      fail(ErrorKind::InvalidValue, arg,
           "expected shape " + shape_string(expected) + " (" + meaning + "), got " + shape_string(t));
  }

  // A matrix [rows, cols] or a stack of them [G, rows, cols], with no negative size.
  void matrix_or_stack(const TensorView& t, const char* arg, const char* matrix, const char* stack) const {
    if (t.ndim != 2 && t.ndim != 3)
      fail(ErrorKind::InvalidValue, arg,
           std::string("expected a 2-D tensor ") + matrix + " or a 3-D tensor " + stack + ", got shape " +
               shape_string(t));
    for (int i = 0; i < t.ndim; ++i)
      if (t.shape[i] < 0) fail(ErrorKind::InvalidValue, arg, "has a negative size: shape " + shape_string(t));
  }

  void dtype(const TensorView& t, const char* arg, DType expected) const {
    if (t.dtype != expected)
      fail(ErrorKind::InvalidType, arg,
           std::string("expected dtype ") + dtype_name(expected) + ", got " + dtype_name(t.dtype));
  }

  // Pointer, device and strides, after the shape and the dtype are checked.
  void storage(const TensorView& t, const char* arg, Access access, Rows rows) const {
    if (t.device != device_)
      fail(ErrorKind::InvalidValue, arg,
           "is on " + device_name(t.device) + " but the input is on " + device_name(device_) +
               "; all tensors of one call must be on the same device");
    if (t.numel() == 0) return;
    if (t.data == nullptr) fail(ErrorKind::InvalidValue, arg, "has a null data pointer");
    for (int i = 0; i < t.ndim; ++i)
      if (t.strides[i] < 0)
        fail(ErrorKind::InvalidValue, arg, "must not have negative strides, got " + strides_string(t));
    if (rows == Rows::Contiguous && t.shape[t.ndim - 1] > 1 && t.strides[t.ndim - 1] != 1)
      fail(ErrorKind::InvalidValue, arg,
           "must be contiguous in its last dimension (stride 1), got strides " + strides_string(t));
    if (access == Access::Write && !elements_are_distinct(t))
      fail(ErrorKind::InvalidValue, arg,
           "has elements that share memory: shape " + shape_string(t) + " with strides " + strides_string(t));
  }

  void disjoint(const TensorView& written, const char* written_arg, const TensorView& other,
                const char* other_arg) const {
    if (written.numel() == 0 || other.numel() == 0) return;
    const auto [first, end] = byte_range(written);
    const auto [other_first, other_end] = byte_range(other);
    if (first < other_end && other_first < end)
      fail(ErrorKind::InvalidValue, written_arg, std::string("must not overlap '") + other_arg + "' in memory");
  }

 private:
  const char* op_;
  Device device_;
};

// A view of no data with the shape [rows, cols], or [groups, rows, cols] when `grouped`.
TensorView shape_of(bool grouped, std::int64_t groups, std::int64_t rows, std::int64_t cols) {
  return grouped ? make_tensor_view(nullptr, DType::F32, {groups, rows, cols})
                 : make_tensor_view(nullptr, DType::F32, {rows, cols});
}

template <typename T>
StridedStack<T> stack_of(const TensorView& t) {
  const int r = t.ndim - 2;  // the dimension of rows
  StridedStack<T> stack;
  stack.data = static_cast<T*>(t.data);
  stack.group_stride = r == 1 ? t.strides[0] : 0;
  stack.row_stride = t.strides[r];
  stack.col_stride = t.strides[r + 1];
  return stack;
}

}  // namespace

QuantizeProblem validate_quantize(ScaleBlock block, const TensorView& x, const TensorView& x_fp8, const TensorView& sf,
                                  bool use_ue8m0) {
  const bool per_token = block == ScaleBlock::Token;
  const char* op = per_token ? "per_token_cast_to_fp8" : "per_block_cast_to_fp8";
  const char* x_arg = per_token ? "x" : "w";
  const char* q_arg = per_token ? "x_fp8" : "w_fp8";
  const CallChecks check(op, x.device);

  check.matrix_or_stack(x, x_arg, per_token ? "[M, K]" : "[N, K]", per_token ? "[G, M, K]" : "[G, N, K]");
  if (x.dtype != DType::BF16 && x.dtype != DType::F32)
    check.fail(ErrorKind::InvalidType, x_arg,
               std::string("expected dtype bfloat16 or float32, got ") + dtype_name(x.dtype));
  const bool grouped = x.ndim == 3;
  const std::int64_t groups = grouped ? x.shape[0] : 1, rows = x.shape[x.ndim - 2], cols = x.shape[x.ndim - 1];
  const std::int64_t scale_rows = per_token ? rows : ceil_div(rows, 128);

  check.dtype(x_fp8, q_arg, DType::E4M3);
  check.dtype(sf, "sf", DType::F32);
  check.shape(x_fp8, q_arg, shape_of(grouped, groups, rows, cols), std::string("the shape of ") + x_arg);
  check.shape(sf, "sf", shape_of(grouped, groups, scale_rows, ceil_div(cols, 128)),
              per_token ? (grouped ? "[G, M, ceil(K/128)]" : "[M, ceil(K/128)]")
                        : (grouped ? "[G, ceil(N/128), ceil(K/128)]" : "[ceil(N/128), ceil(K/128)]"));
  check.storage(x, x_arg, Access::Read, Rows::Contiguous);
  check.storage(x_fp8, q_arg, Access::Write, Rows::Contiguous);
  check.storage(sf, "sf", Access::Write, Rows::AnyLayout);
  check.disjoint(x_fp8, q_arg, x, x_arg);
  check.disjoint(sf, "sf", x, x_arg);
  check.disjoint(sf, "sf", x_fp8, q_arg);

  QuantizeProblem p;
  p.block = block;
  p.device = x.device;
  p.input = x.dtype;
  p.use_ue8m0 = use_ue8m0;
  p.groups = groups, p.rows = rows, p.cols = cols;
  p.x = stack_of<const void>(x);
  p.q = stack_of<std::uint8_t>(x_fp8);
  p.sf = stack_of<float>(sf);
  return p;
}

ScaleCopyProblem validate_copy_scales(const TensorView& sf, const TensorView& out) {
  const CallChecks check("copy_scales", sf.device);
  check.matrix_or_stack(sf, "sf", "[M, KB]", "[G, M, KB]");
  check.dtype(sf, "sf", DType::F32);
  check.dtype(out, "out", DType::F32);
  const bool grouped = sf.ndim == 3;
  const std::int64_t groups = grouped ? sf.shape[0] : 1, rows = sf.shape[sf.ndim - 2], cols = sf.shape[sf.ndim - 1];
  check.shape(out, "out", shape_of(grouped, groups, rows, cols), "the shape of sf");
  check.storage(sf, "sf", Access::Read, Rows::AnyLayout);
  check.storage(out, "out", Access::Write, Rows::AnyLayout);
  check.disjoint(out, "out", sf, "sf");

  ScaleCopyProblem p;
  p.device = sf.device;
  p.groups = groups, p.rows = rows, p.cols = cols;
  p.src = stack_of<const float>(sf);
  p.dst = stack_of<float>(out);
  return p;
}

}  // namespace fgemm::detail
