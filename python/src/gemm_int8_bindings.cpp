#include "gemm_int8_bindings.hpp"

#include <Python.h>

#include <cstdint>
#include <optional>
#include <string>

#include "deepgemm_options.hpp"
#include "errors.hpp"
#include "fgemm/gemm_int8.hpp"
#include "run_on.hpp"
#include "torch_tensor.hpp"

namespace nb = nanobind;

namespace fgemm::python {
namespace {

constexpr const char* kNormal = "int8_gemm_nt";
constexpr const char* kContiguous = "m_grouped_int8_gemm_nt_contiguous";
constexpr const char* kMasked = "m_grouped_int8_gemm_nt_masked";

// The binding checks every argument itself, to name it in errors: so each one takes any object, None included.
auto any(const char* name) { return nb::arg(name).none(); }

bool is_pair(nb::handle object) { return PyTuple_Check(object.ptr()) || PyList_Check(object.ptr()); }

// int8_gemm_nt: scaled where a is a pair (a, sa), exact (D int32) where it is a tensor.
void int8_gemm_nt_py(nb::handle a, nb::handle b, nb::handle d, nb::handle c, nb::handle bias) {
  if (!is_pair(a)) {
    const TensorView a_view = tensor_view(a, kNormal, "a");
    if (is_pair(b))
      fail_argument(ErrorKind::InvalidType, kNormal, "b",
                    "expected a tensor, as a is one (the exact INT32 product takes no scales), got a pair");
    const TensorView b_view = tensor_view(b, kNormal, "b");
    const TensorView d_view = tensor_view(d, kNormal, "d");
    for (auto [object, name] : {std::pair{c, "c"}, std::pair{bias, "bias"}})
      if (!object.is_none())
        fail_argument(ErrorKind::InvalidValue, kNormal, name,
                      "must be None for the exact INT32 product (a and b without scales)");
    run_on(a_view.device, [&](Stream stream) { int8_gemm_nt(a_view, b_view, d_view, stream); });
    return;
  }
  const auto [a_view, sa_view] = tensor_pair(a, kNormal, "a", "sa");
  const auto [b_view, sb_view] = tensor_pair(b, kNormal, "b", "sb");
  const TensorView d_view = tensor_view(d, kNormal, "d");
  const std::optional<TensorView> c_view = optional_tensor_view(c, kNormal, "c");
  const std::optional<TensorView> bias_view = optional_tensor_view(bias, kNormal, "bias");
  run_on(a_view.device,
         [&](Stream stream) { int8_gemm_nt(a_view, sa_view, b_view, sb_view, d_view, c_view, bias_view, stream); });
}

void m_grouped_contiguous_py(nb::handle a, nb::handle b, nb::handle d, nb::handle grouped_layout,
                             nb::handle use_psum_layout) {
  const ContiguousLayout form = contiguous_layout_form(use_psum_layout, kContiguous);
  const auto [a_view, sa_view] = tensor_pair(a, kContiguous, "a", "sa");
  const auto [b_view, sb_view] = tensor_pair(b, kContiguous, "b", "sb");
  const TensorView d_view = tensor_view(d, kContiguous, "d");
  const TensorView layout_view = tensor_view(grouped_layout, kContiguous, "grouped_layout");
  run_on(a_view.device, [&](Stream stream) {
    m_grouped_int8_gemm_nt_contiguous(a_view, sa_view, b_view, sb_view, d_view, layout_view, form, stream);
  });
}

void m_grouped_masked_py(nb::handle a, nb::handle b, nb::handle d, nb::handle masked_m, nb::handle expected_m) {
  const auto [a_view, sa_view] = tensor_pair(a, kMasked, "a", "sa");
  const auto [b_view, sb_view] = tensor_pair(b, kMasked, "b", "sb");
  const TensorView d_view = tensor_view(d, kMasked, "d");
  const TensorView masked_view = tensor_view(masked_m, kMasked, "masked_m");
  const std::int64_t expected = int_argument(expected_m, kMasked, "expected_m");
  run_on(a_view.device, [&](Stream stream) {
    m_grouped_int8_gemm_nt_masked(a_view, sa_view, b_view, sb_view, d_view, masked_view, expected, stream);
  });
}

}  // namespace

void register_gemm_int8_bindings(nb::module_& module) {
  module.def(kNormal, &int8_gemm_nt_py, any("a"), any("b"), any("d"), any("c") = nb::none(),
             any("bias") = nb::none(),
             "D = C + bias + the scaled sums of A @ B^T, written into d. a = (a, sa), b = (b, sb): a [M, K] and "
             "b [N, K] int8, the scales float32 naming the recipe by their shapes: sa [M], [M, 1] or 0-d with sb "
             "[N], [1, N] or 0-d (per token and per channel, or per tensor), or sa [M, ceil(K/128)] with sb "
             "[ceil(N/128), ceil(K/128)] (DeepSeek's blocks, each 128-wide K block's exact INT32 sum scaled and "
             "promoted). d [M, N] bfloat16, float16 or float32; c (optional) [M, N] float32; bias (optional) [N] "
             "float32 or d's dtype. With a and b plain int8 tensors (no scales), d is int32 [M, N] and receives the "
             "exact INT32 sums, as torch._int_mm. CUDA tensors run on the current torch stream.");
  module.def(kContiguous, &m_grouped_contiguous_py, any("a"), any("b"), any("d"), any("grouped_layout"),
             any("use_psum_layout") = false,
             "Grouped INT8 GEMM, contiguous layout (MoE): a = (a [M_sum, K] int8, sa), b = (b [G, N, K] int8, sb), "
             "d [M_sum, N] bfloat16, float16 or float32. Scales per token and channel: sa [M_sum] (or [M_sum, 1], "
             "or 0-d) with sb [G, N] (or [G], one per expert); or DeepSeek's blocks: sa [M_sum, ceil(K/128)] with "
             "sb [G, ceil(N/128), ceil(K/128)]. grouped_layout int32: [M_sum], the group of each row, -1 for a "
             "padding row; or, with use_psum_layout=True, [G], the prefix sums of the groups' rows. Rows in no "
             "group keep what d held.");
  module.def(kMasked, &m_grouped_masked_py, any("a"), any("b"), any("d"), any("masked_m"), any("expected_m"),
             "Grouped INT8 GEMM, masked layout (MoE): d[g, :masked_m[g]] = the scaled a[g, :masked_m[g]] @ b[g]^T. "
             "a = (a [G, M_max, K] int8, sa), b = (b [G, N, K] int8, sb), d [G, M_max, N] bfloat16, float16 or "
             "float32. Scales per token and channel: sa [G, M_max] (or [G, M_max, 1]) with sb [G, N] (or [G]); or "
             "DeepSeek's blocks: sa [G, M_max, ceil(K/128)] with sb [G, ceil(N/128), ceil(K/128)]. masked_m int32 "
             "[G] on the device of a (never read by the host; rows past it keep what d held), expected_m a "
             "positive hint of the typical masked_m.");
}

}  // namespace fgemm::python
