#include "core/quantize_checks.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "fgemm/error.hpp"

namespace fgemm::detail {
namespace {

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

}  // namespace

void QuantizeChecks::shape(const TensorView& t, const char* arg, const TensorView& expected,
                           const std::string& meaning) const {
  bool same = t.ndim == expected.ndim;
  for (int i = 0; same && i < t.ndim; ++i) same = t.shape[i] == expected.shape[i];
  if (!same)
    fail(ErrorKind::InvalidValue, arg,
         "expected shape " + shape_string(expected) + " (" + meaning + "), got " + shape_string(t));
}

void QuantizeChecks::matrix_or_stack(const TensorView& t, const char* arg, const char* matrix,
                                     const char* stack) const {
  if (t.ndim != 2 && t.ndim != 3)
    fail(ErrorKind::InvalidValue, arg,
         std::string("expected a 2-D tensor ") + matrix + " or a 3-D tensor " + stack + ", got shape " +
             shape_string(t));
  nonnegative_sizes(t, arg);
}

void QuantizeChecks::storage(const TensorView& t, const char* arg, Access access, Rows rows) const {
  if (t.device != device_)
    fail(ErrorKind::InvalidValue, arg,
         "is on " + device_name(t.device) + " but the input is on " + device_name(device_) +
             "; all tensors of one call must be on the same device");
  if (t.numel() == 0) return;
  present(t, arg);
  nonnegative_strides(t, arg);
  if (rows == Rows::Contiguous && t.shape[t.ndim - 1] > 1 && t.strides[t.ndim - 1] != 1)
    fail(ErrorKind::InvalidValue, arg,
         "must be contiguous in its last dimension (stride 1), got strides " + strides_of(t));
  if (access == Access::Write && !elements_are_distinct(t))
    fail(ErrorKind::InvalidValue, arg,
         "has elements that share memory: shape " + shape_string(t) + " with strides " + strides_of(t));
}

TensorView shape_only(std::initializer_list<std::int64_t> dims) { return make_tensor_view(nullptr, DType::F32, dims); }

TensorView matrix_shape(bool grouped, std::int64_t groups, std::int64_t rows, std::int64_t cols) {
  return grouped ? shape_only({groups, rows, cols}) : shape_only({rows, cols});
}

}  // namespace fgemm::detail
