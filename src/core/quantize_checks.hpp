// The argument checks the quantizers share (quantize_validate.cpp, quantize_int8_validate.cpp), beyond those of
// every operation (checker.hpp): every tensor on the input's device, matrices or stacks of them, outputs whose
// elements are distinct and that overlap nothing else of the call.
#pragma once

#include <cstdint>
#include <string>

#include "core/checker.hpp"
#include "core/quantize_problem.hpp"
#include "fgemm/tensor.hpp"

namespace fgemm::detail {

enum class Access { Read, Write };
enum class Rows { Contiguous, AnyLayout };

class QuantizeChecks : public Checker {
 public:
  // `device`: the input's, where every tensor of the call must be.
  QuantizeChecks(const char* op, const Device& device) : Checker(op), device_(device) {}

  // The shape of `t` is that of `expected` (a view of no data).
  void shape(const TensorView& t, const char* arg, const TensorView& expected, const std::string& meaning) const;

  // A matrix [rows, cols] or a stack of them [G, rows, cols], with no negative size.
  void matrix_or_stack(const TensorView& t, const char* arg, const char* matrix, const char* stack) const;

  // Pointer, device and strides, after the shape and the dtype are checked.
  void storage(const TensorView& t, const char* arg, Access access, Rows rows) const;

 private:
  Device device_;
};

// A view of no data with the shape `dims`, to compare shapes with.
TensorView shape_only(std::initializer_list<std::int64_t> dims);

// A view of no data with the shape [rows, cols], or [groups, rows, cols] when `grouped`.
TensorView matrix_shape(bool grouped, std::int64_t groups, std::int64_t rows, std::int64_t cols);

// The stack of matrices of a checked 2-D or 3-D tensor (group stride 0 for a matrix).
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

}  // namespace fgemm::detail
