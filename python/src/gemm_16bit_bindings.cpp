#include "gemm_16bit_bindings.hpp"

#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "deepgemm_options.hpp"
#include "fgemm/gemm_16bit.hpp"
#include "run_on.hpp"
#include "torch_tensor.hpp"

namespace nb = nanobind;

namespace fgemm::python {
namespace {

using DenseGemm = void (*)(const TensorView&, const TensorView&, const TensorView&, const std::optional<TensorView>&,
                           Stream);
using ContiguousGemm = void (*)(const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                                ContiguousLayout, Stream);
using MaskedGemm = void (*)(const TensorView&, const TensorView&, const TensorView&, const TensorView&, std::int64_t,
                            Stream);
using KGroupedGemm = void (*)(const TensorView&, const TensorView&, const TensorView&,
                              const std::vector<std::int64_t>&, const TensorView&, const std::optional<TensorView>&,
                              Stream);

// One bound function: its name, the C++ function, DeepGEMM's default of compiled_dims and the docstring.
template <typename Gemm>
struct Binding {
  const char* name;
  Gemm gemm;
  const char* compiled_dims;
  const char* doc;
};

// The operands every function has, read after DeepGEMM's compiled_dims is checked.
struct Operands {
  TensorView a, b, d;
};

Operands read_operands(nb::handle a, nb::handle b, nb::handle d, nb::handle compiled_dims, const char* op) {
  check_compiled_dims(compiled_dims, op);
  return {tensor_view(a, op, "a"), tensor_view(b, op, "b"), tensor_view(d, op, "d")};
}

// The binding checks every argument itself, to name it in errors: so each one takes any object, None included.
auto any(const char* name) { return nb::arg(name).none(); }

// The two dtypes' docstrings differ in the dtype's name only; nanobind keeps the pointer of a docstring, so each
// is a literal.
#define FGEMM_DENSE_DOC(dtype, formula, a_shape, b_shape)                                                        \
  "D = " formula " (+ C), written into d: a " a_shape " and b " b_shape " " dtype ", d [M, N] " dtype " or "     \
  "float32, c (optional) [M, N] float32, possibly d itself; each operand's last dimension contiguous (a "      \
  "transposed view is refused, naming the function that takes it). CUDA tensors run on the current torch "    \
  "stream. compiled_dims (DeepGEMM's) may be any str: fgemm specialises its kernels on every dimension."
#define FGEMM_CONTIGUOUS_DOC(dtype, b_shape)                                                                     \
  "Grouped GEMM, contiguous layout (MoE): a [M_sum, K] and b " b_shape " " dtype ", d [M_sum, N] " dtype " or " \
  "float32. grouped_layout int32 gives the groups: [M_sum], the group of each row, -1 for a padding row; or, "  \
  "with use_psum_layout=True, [G], the prefix sums of the groups' rows (group g's rows run from "              \
  "grouped_layout[g - 1] rounded up to a multiple of 128, 0 for g = 0, to grouped_layout[g]). Rows in no "     \
  "group keep what d held. compiled_dims may be any str."
#define FGEMM_MASKED_DOC(dtype)                                                                                   \
  "Grouped GEMM, masked layout (MoE): d[g, :masked_m[g]] = a[g, :masked_m[g]] @ b[g]^T, with a [G, M_max, K] "  \
  "and b [G, N, K] " dtype ", d [G, M_max, N] " dtype " or float32, masked_m int32 [G] on the device of a "    \
  "(never read by the host; rows past it keep what d held), expected_m a positive hint of the typical "         \
  "masked_m. compiled_dims may be any str."
#define FGEMM_K_GROUPED_DOC(dtype)                                                                                \
  "K-grouped GEMM (the experts' weight gradient): d[g] = c[g] + a_g^T @ b_g, with a [sum(ks), M] and b "        \
  "[sum(ks), N] " dtype ", expert g's rows the ks[g] after those of the experts before it; d and c (optional, " \
  "possibly d itself) float32 [G, M, N]. ks (a list of ints, multiples of 128, possibly 0) and ks_tensor "      \
  "(int32 [G] on the device of a, what the GPU reads) hold the same counts; an empty expert's d[g] is c[g], "   \
  "or zeros without c. compiled_dims may be any str."

const Binding<DenseGemm> kDense[] = {
    {"bf16_gemm_nt", &bf16_gemm_nt, "nk", FGEMM_DENSE_DOC("bfloat16", "a @ b^T", "[M, K]", "[N, K]")},
    {"bf16_gemm_nn", &bf16_gemm_nn, "nk", FGEMM_DENSE_DOC("bfloat16", "a @ b", "[M, K]", "[K, N]")},
    {"bf16_gemm_tn", &bf16_gemm_tn, "mn", FGEMM_DENSE_DOC("bfloat16", "a^T @ b", "[K, M]", "[K, N]")},
    {"bf16_gemm_tt", &bf16_gemm_tt, "mn", FGEMM_DENSE_DOC("bfloat16", "a^T @ b^T", "[K, M]", "[N, K]")},
    {"fp16_gemm_nt", &fp16_gemm_nt, "nk", FGEMM_DENSE_DOC("float16", "a @ b^T", "[M, K]", "[N, K]")},
    {"fp16_gemm_nn", &fp16_gemm_nn, "nk", FGEMM_DENSE_DOC("float16", "a @ b", "[M, K]", "[K, N]")},
    {"fp16_gemm_tn", &fp16_gemm_tn, "mn", FGEMM_DENSE_DOC("float16", "a^T @ b", "[K, M]", "[K, N]")},
    {"fp16_gemm_tt", &fp16_gemm_tt, "mn", FGEMM_DENSE_DOC("float16", "a^T @ b^T", "[K, M]", "[N, K]")},
};
const Binding<ContiguousGemm> kContiguous[] = {
    {"m_grouped_bf16_gemm_nt_contiguous", &m_grouped_bf16_gemm_nt_contiguous, "nk",
     FGEMM_CONTIGUOUS_DOC("bfloat16", "[G, N, K]")},
    {"m_grouped_bf16_gemm_nn_contiguous", &m_grouped_bf16_gemm_nn_contiguous, "nk",
     FGEMM_CONTIGUOUS_DOC("bfloat16", "[G, K, N]")},
    {"m_grouped_fp16_gemm_nt_contiguous", &m_grouped_fp16_gemm_nt_contiguous, "nk",
     FGEMM_CONTIGUOUS_DOC("float16", "[G, N, K]")},
    {"m_grouped_fp16_gemm_nn_contiguous", &m_grouped_fp16_gemm_nn_contiguous, "nk",
     FGEMM_CONTIGUOUS_DOC("float16", "[G, K, N]")},
};
const Binding<MaskedGemm> kMasked[] = {
    {"m_grouped_bf16_gemm_nt_masked", &m_grouped_bf16_gemm_nt_masked, "nk", FGEMM_MASKED_DOC("bfloat16")},
    {"m_grouped_fp16_gemm_nt_masked", &m_grouped_fp16_gemm_nt_masked, "nk", FGEMM_MASKED_DOC("float16")},
};
const Binding<KGroupedGemm> kKGrouped[] = {
    {"k_grouped_bf16_gemm_tn_contiguous", &k_grouped_bf16_gemm_tn_contiguous, "mn", FGEMM_K_GROUPED_DOC("bfloat16")},
    {"k_grouped_fp16_gemm_tn_contiguous", &k_grouped_fp16_gemm_tn_contiguous, "mn", FGEMM_K_GROUPED_DOC("float16")},
};

// Each call reads and checks its arguments in their order, then runs on the device of a (GIL released on the CPU).

void def_dense(nb::module_& module, const Binding<DenseGemm>& binding) {
  module.def(
      binding.name,
      [binding](nb::handle a, nb::handle b, nb::handle d, nb::handle c, nb::handle compiled_dims) {
        const Operands x = read_operands(a, b, d, compiled_dims, binding.name);
        const std::optional<TensorView> c_view = optional_tensor_view(c, binding.name, "c");
        run_on(x.a.device, [&](Stream stream) { binding.gemm(x.a, x.b, x.d, c_view, stream); });
      },
      any("a"), any("b"), any("d"), any("c") = nb::none(), any("compiled_dims") = binding.compiled_dims, binding.doc);
}

void def_contiguous(nb::module_& module, const Binding<ContiguousGemm>& binding) {
  module.def(
      binding.name,
      [binding](nb::handle a, nb::handle b, nb::handle d, nb::handle grouped_layout, nb::handle compiled_dims,
                nb::handle use_psum_layout) {
        const ContiguousLayout form = contiguous_layout_form(use_psum_layout, binding.name);
        const Operands x = read_operands(a, b, d, compiled_dims, binding.name);
        const TensorView layout_view = tensor_view(grouped_layout, binding.name, "grouped_layout");
        run_on(x.a.device, [&](Stream stream) { binding.gemm(x.a, x.b, x.d, layout_view, form, stream); });
      },
      any("a"), any("b"), any("d"), any("grouped_layout"), any("compiled_dims") = binding.compiled_dims,
      any("use_psum_layout") = false, binding.doc);
}

void def_masked(nb::module_& module, const Binding<MaskedGemm>& binding) {
  module.def(
      binding.name,
      [binding](nb::handle a, nb::handle b, nb::handle d, nb::handle masked_m, nb::handle expected_m,
                nb::handle compiled_dims) {
        const Operands x = read_operands(a, b, d, compiled_dims, binding.name);
        const TensorView masked_view = tensor_view(masked_m, binding.name, "masked_m");
        const std::int64_t expected = int_argument(expected_m, binding.name, "expected_m");
        run_on(x.a.device, [&](Stream stream) { binding.gemm(x.a, x.b, x.d, masked_view, expected, stream); });
      },
      any("a"), any("b"), any("d"), any("masked_m"), any("expected_m"), any("compiled_dims") = binding.compiled_dims,
      binding.doc);
}

void def_k_grouped(nb::module_& module, const Binding<KGroupedGemm>& binding) {
  module.def(
      binding.name,
      [binding](nb::handle a, nb::handle b, nb::handle d, nb::handle ks, nb::handle ks_tensor, nb::handle c,
                nb::handle compiled_dims) {
        const Operands x = read_operands(a, b, d, compiled_dims, binding.name);
        const std::vector<std::int64_t> ks_values = int_list_argument(ks, binding.name, "ks");
        const TensorView ks_view = tensor_view(ks_tensor, binding.name, "ks_tensor");
        const std::optional<TensorView> c_view = optional_tensor_view(c, binding.name, "c");
        run_on(x.a.device,
               [&](Stream stream) { binding.gemm(x.a, x.b, x.d, ks_values, ks_view, c_view, stream); });
      },
      any("a"), any("b"), any("d"), any("ks"), any("ks_tensor"), any("c") = nb::none(),
      any("compiled_dims") = binding.compiled_dims, binding.doc);
}

}  // namespace

void register_gemm_16bit_bindings(nb::module_& module) {
  for (const auto& binding : kDense) def_dense(module, binding);
  for (const auto& binding : kContiguous) def_contiguous(module, binding);
  for (const auto& binding : kMasked) def_masked(module, binding);
  for (const auto& binding : kKGrouped) def_k_grouped(module, binding);
}

}  // namespace fgemm::python
