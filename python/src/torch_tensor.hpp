// torch tensors as fgemm::TensorView, read without linking libtorch: the data pointer, dtype, shape,
// strides and device come from the tensor's Python attributes, so the extension works with any torch build.
// (torch's __dlpack__ alone costs about 2 µs a tensor; these reads take about 0.3 µs.)
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "fgemm/fgemm.hpp"

namespace fgemm::python {

// Looks up torch's tensor type, dtypes and stream accessor. Called once, when the module is imported.
void init_torch_interop();

// The view of `object`, which must be a torch.Tensor on the CPU or a CUDA device with a dtype fgemm knows.
// `op` and `arg` name the operation and the argument in error messages.
TensorView tensor_view(nanobind::handle object, const char* op, const char* arg);

// The view of `object` as tensor_view reads it, or nullopt for None (an optional tensor argument).
std::optional<TensorView> optional_tensor_view(nanobind::handle object, const char* op, const char* arg);

// The two tensors of a pair (data, scales) such as DeepGEMM's `(a, sfa)`, passed as argument `pair_arg`.
std::pair<TensorView, TensorView> tensor_pair(nanobind::handle object, const char* op, const char* pair_arg,
                                              const char* scales_arg);

// A Python integer (or any object with __index__, but not a bool) passed as argument `arg`.
std::int64_t int_argument(nanobind::handle object, const char* op, const char* arg);

// A list (or tuple) of Python integers passed as argument `arg`, such as the k-grouped GEMM's ks.
std::vector<std::int64_t> int_list_argument(nanobind::handle object, const char* op, const char* arg);

// The stream torch currently uses on `device` (nullptr for the CPU), on which fgemm queues its work.
Stream current_stream(const Device& device);

}  // namespace fgemm::python
