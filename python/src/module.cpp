// The extension module fgemm._C: DeepGEMM's Python names bound straight to the C++ API, with no Python code
// on the path of a call. Arguments are read in C++ (torch_tensor.hpp), checked by the C++ API, and its
// errors become ValueError, TypeError or RuntimeError (errors.hpp).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>
#include <string>

#include "cpu/isa.hpp"
#include "cpu/thread_pool.hpp"
#include "cuda/gemm_sm90.hpp"
#include "deepgemm_options.hpp"
#include "driver/nvrtc.hpp"
#include "errors.hpp"
#include "fgemm/fgemm.hpp"
#include "gemm_16bit_bindings.hpp"
#include "gemm_int8_bindings.hpp"
#include "log_bindings.hpp"
#include "quantize_bindings.hpp"
#include "run_on.hpp"
#include "torch_tensor.hpp"
#include "warmup_bindings.hpp"

// A macro, not a constant, so that each docstring below is one string literal (nanobind keeps the pointer).
#define FGEMM_OPTIONS_DOC                                                                                      \
  "\n\nDeepGEMM's keyword arguments are accepted where they describe what fgemm does: recipe (1, 128, 128) " \
  "(recipe_a (1, 128), recipe_b (128, 128)), (1, 1, 128) (recipe_b (1, 128)) where the operation takes "        \
  "recipe 1D1D, or None; compiled_dims any string (fgemm specialises its kernels "                              \
  "on every dimension anyway); disable_ue8m0_cast True or False (on Hopper neither casts the FP32 scales). "  \
  "Any other value raises ValueError or TypeError."

namespace nb = nanobind;
using namespace nb::literals;

namespace fgemm::python {
namespace {

constexpr const char* kNormal = "fp8_gemm_nt";
constexpr const char* kContiguous = "m_grouped_fp8_gemm_nt_contiguous";
constexpr const char* kMasked = "m_grouped_fp8_gemm_nt_masked";
constexpr const char* kKGrouped = "k_grouped_fp8_gemm_nt_contiguous";

// The operands every layout has, read from DeepGEMM's arguments `a` = (a, sfa), `b` = (b, sfb) and `d`, after
// the DeepGEMM options are checked.
struct Operands {
  TensorView a, sfa, b, sfb, d;
};

Operands read_operands(nb::handle a, nb::handle b, nb::handle d, const DeepGemmOptions& options, const char* op,
                       bool takes_1d1d = false) {
  const int granularity = check_deepgemm_options(options, op, takes_1d1d);
  const auto [a_view, sfa_view] = tensor_pair(a, op, "a", "sfa");
  const auto [b_view, sfb_view] = tensor_pair(b, op, "b", "sfb");
  check_scales_of_recipe(granularity, b_view, sfb_view, op);
  return {a_view, sfa_view, b_view, sfb_view, tensor_view(d, op, "d")};
}

void fp8_gemm_nt_py(nb::handle a, nb::handle b, nb::handle d, nb::handle c, nb::handle recipe,
                    nb::handle recipe_a, nb::handle recipe_b, nb::handle compiled_dims,
                    nb::handle disable_ue8m0_cast) {
  const Operands x =
      read_operands(a, b, d, {recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast}, kNormal, true);
  std::optional<TensorView> c_view;
  if (!c.is_none()) c_view = tensor_view(c, kNormal, "c");
  run_on(x.a.device, [&](Stream stream) { fp8_gemm_nt(x.a, x.sfa, x.b, x.sfb, x.d, c_view, stream); });
}

void m_grouped_contiguous_py(nb::handle a, nb::handle b, nb::handle d, nb::handle m_indices, nb::handle recipe,
                             nb::handle recipe_a, nb::handle recipe_b, nb::handle compiled_dims,
                             nb::handle disable_ue8m0_cast, nb::handle use_psum_layout, nb::handle d_row_starts) {
  const Operands x =
      read_operands(a, b, d, {recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast}, kContiguous);
  const ContiguousLayout form = contiguous_layout_form(use_psum_layout, kContiguous);
  const TensorView indices = tensor_view(m_indices, kContiguous, "m_indices");
  const std::optional<TensorView> starts = optional_tensor_view(d_row_starts, kContiguous, "d_row_starts");
  run_on(x.a.device, [&](Stream stream) {
    m_grouped_fp8_gemm_nt_contiguous(x.a, x.sfa, x.b, x.sfb, x.d, indices, form, starts, stream);
  });
}

void m_grouped_masked_py(nb::handle a, nb::handle b, nb::handle d, nb::handle masked_m, nb::handle expected_m,
                         nb::handle recipe, nb::handle recipe_a, nb::handle recipe_b, nb::handle compiled_dims,
                         nb::handle disable_ue8m0_cast) {
  const Operands x = read_operands(a, b, d, {recipe, recipe_a, recipe_b, compiled_dims, disable_ue8m0_cast}, kMasked);
  const TensorView masked = tensor_view(masked_m, kMasked, "masked_m");
  const std::int64_t expected = int_argument(expected_m, kMasked, "expected_m");
  run_on(x.a.device, [&](Stream stream) {
    m_grouped_fp8_gemm_nt_masked(x.a, x.sfa, x.b, x.sfb, x.d, masked, expected, stream);
  });
}

// DeepGEMM's sm90 k-grouped FP8 GEMM takes recipe (1, 1, 128) alone, and not its prefix-sum layout.
void k_grouped_py(nb::handle a, nb::handle b, nb::handle d, nb::handle ks, nb::handle ks_tensor, nb::handle c,
                  nb::handle recipe, nb::handle compiled_dims, nb::handle use_psum_layout) {
  if (check_deepgemm_options({recipe, nb::none(), nb::none(), compiled_dims, nb::bool_(false)}, kKGrouped, true) !=
      1)
    fail_argument(ErrorKind::InvalidValue, kKGrouped, "recipe",
                  std::string("must be (1, 1, 128): A and B are scaled per 1x128 block, got ") +
                      nb::repr(recipe).c_str());
  if (contiguous_layout_form(use_psum_layout, kKGrouped) != ContiguousLayout::MIndices)
    fail_argument(ErrorKind::InvalidValue, kKGrouped, "use_psum_layout",
                  "must be False: the experts' K are given as counts (ks, ks_tensor)");
  const auto [a_view, sfa_view] = tensor_pair(a, kKGrouped, "a", "sfa");
  const auto [b_view, sfb_view] = tensor_pair(b, kKGrouped, "b", "sfb");
  const TensorView d_view = tensor_view(d, kKGrouped, "d");
  const std::vector<std::int64_t> ks_values = int_list_argument(ks, kKGrouped, "ks");
  const TensorView ks_view = tensor_view(ks_tensor, kKGrouped, "ks_tensor");
  const std::optional<TensorView> c_view = optional_tensor_view(c, kKGrouped, "c");
  run_on(a_view.device, [&](Stream stream) {
    k_grouped_fp8_gemm_nt_contiguous(a_view, sfa_view, b_view, sfb_view, d_view, ks_values, ks_view, c_view, stream);
  });
}

void set_num_sms_py(nb::handle num_sms) {
  const std::int64_t value = int_argument(num_sms, "set_num_sms", "num_sms");
  if (value > INT32_MAX)
    fail_argument(ErrorKind::InvalidValue, "set_num_sms", "num_sms",
                  "must fit in a 32-bit int, got " + std::to_string(value));
  set_num_sms(static_cast<int>(value));
}

// A bool, as DeepGEMM's set_pdl takes (an int 0 or 1 would hide a mistaken argument).
void set_pdl_py(nb::handle enable) {
  if (!PyBool_Check(enable.ptr()))
    fail_argument(ErrorKind::InvalidType, "set_pdl", "enable",
                  std::string("must be a bool, got ") + nb::repr(enable).c_str());
  set_pdl(enable.ptr() == Py_True);
}

}  // namespace
}  // namespace fgemm::python

// The binding checks every argument itself, to name it in errors: so each one takes any object, None included.
auto any(const char* name) { return nb::arg(name).none(); }

NB_MODULE(_C, m) {
  using namespace fgemm::python;
  init_torch_interop();
  init_deepgemm_options();
  register_error_translation();
  register_quantize_bindings(m);
  register_warmup_bindings(m);
  register_log_bindings(m);
  register_gemm_16bit_bindings(m);
  register_gemm_int8_bindings(m);

  // CMake's project() version, compiled in: the package shows it wherever the extension is imported from.
  m.attr("__version__") = FGEMM_VERSION;

  m.def("fp8_gemm_nt", &fp8_gemm_nt_py, any("a"), any("b"), any("d"), any("c") = nb::none(),
        any("recipe") = nb::none(), any("recipe_a") = nb::none(), any("recipe_b") = nb::none(),
        any("compiled_dims") = "nk", any("disable_ue8m0_cast") = false,
        "D = A @ B^T (+ C) with A = (a, sfa), B = (b, sfb): a [M, K] and b [N, K] float8_e4m3fn, "
        "sfa [M, ceil(K/128)] float32, sfb float32 [ceil(N/128), ceil(K/128)] (recipe 1D2D) or [N, "
        "ceil(K/128)] (recipe (1, 1, 128), 1D1D: B per 1x128 block, for weight gradients), d [M, N] bfloat16 or "
        "float32, c (optional) [M, N] float32, which may be d itself. CUDA tensors run on the current torch "
        "stream." FGEMM_OPTIONS_DOC);
  m.def("m_grouped_fp8_gemm_nt_contiguous", &m_grouped_contiguous_py, any("a"), any("b"), any("d"),
        any("m_indices"), any("recipe") = nb::none(), any("recipe_a") = nb::none(), any("recipe_b") = nb::none(),
        any("compiled_dims") = "nk", any("disable_ue8m0_cast") = false, any("use_psum_layout") = false,
        any("d_row_starts") = nb::none(),
        "Grouped GEMM, contiguous layout: a [M_sum, K], b [G, N, K], sfb [G, ceil(N/128), "
        "ceil(K/128)], d [M_sum, N]; m_indices int32 [M_sum] gives the group of each row, -1 marks a "
        "padding row whose row of d is left as it was. With use_psum_layout=True, m_indices is instead "
        "int32 [G], the prefix sums of the groups' rows (DeepGEMM's psum layout): group g's rows run from "
        "m_indices[g - 1] rounded up to a multiple of 128 (0 for g = 0) to m_indices[g], and rows in no "
        "group's range are left as they were. d_row_starts (psum layout only): int32 [G] on the device, and d "
        "[T, N] holds the groups' rows without their padding, group g's i-th row at row d_row_starts[g] + i; "
        "rows at or past T are not written." FGEMM_OPTIONS_DOC);
  m.def("m_grouped_fp8_gemm_nt_masked", &m_grouped_masked_py, any("a"), any("b"), any("d"), any("masked_m"),
        any("expected_m"), any("recipe") = nb::none(), any("recipe_a") = nb::none(), any("recipe_b") = nb::none(),
        any("compiled_dims") = "nk", any("disable_ue8m0_cast") = false,
        "Grouped GEMM, masked layout: a [G, M_max, K], b [G, N, K], d [G, M_max, N]; only the first "
        "masked_m[g] rows of group g are computed (masked_m int32 [G], on the device of a, never read "
        "by the host); expected_m is a positive hint of the typical masked_m." FGEMM_OPTIONS_DOC);
  m.def("k_grouped_fp8_gemm_nt_contiguous", &k_grouped_py, any("a"), any("b"), any("d"), any("ks"),
        any("ks_tensor"), any("c") = nb::none(), any("recipe") = nb::make_tuple(1, 1, 128),
        any("compiled_dims") = "mn", any("use_psum_layout") = false,
        "Mixture-of-experts weight gradients, K grouped (recipe 1D1D): d[g] = c[g] + A_g @ B_g^T, d [G, M, N]. "
        "a = (a, sfa): a float8_e4m3fn [sum(ks) * M], expert g's [M, ks[g]] block (K-major) after the experts "
        "before it, sfa float32 [M, sum(ks) / 128]; b = (b, sfb) likewise with N. ks: each expert's K, a list of "
        "multiples of 128 (0 allowed); ks_tensor: the same as int32 [G] on the device of a. d float32 needs c "
        "(float32 [G, M, N], which may be d); d bfloat16 takes an optional float32 c apart from d. recipe "
        "(1, 1, 128) alone; compiled_dims any str; use_psum_layout False alone.");
  m.def("set_num_sms", &set_num_sms_py, any("num_sms"),
        "Limits the GPU kernels to num_sms streaming multiprocessors (0: all of the device's).");
  m.def("get_num_sms", &fgemm::get_num_sms,
        "The SMs the GPU kernels use: the value of set_num_sms, else the current device's count (0 without a "
        "usable GPU).");
  m.def("set_pdl", &set_pdl_py, any("enable"),
        "Programmatic dependent launch of the GEMM and quantization kernels (off by default): each may start "
        "while the previous kernel of its stream runs, its prologue overlapping that kernel's last tiles; the "
        "same bits either way.");
  m.def("get_pdl", &fgemm::get_pdl, "Whether set_pdl(True) is in effect.");
  m.def(
      "get_m_alignment_for_contiguous_layout", [] { return fgemm::kMAlignmentForContiguousLayout; },
      "Each group's rows in the contiguous layout start at a multiple of this (128).");

  // Beyond the C++ API, from the library's internals: the NVRTC search path (set at import), the CPU backend's
  // instruction set (for the main job and the benchmark), and a tile-shape switch for tuning (the GPU benchmark).
  m.def("add_nvrtc_search_dir", &fgemm::driver::add_nvrtc_search_dir, "directory"_a,
        "Adds a directory to search for libnvrtc; only directories added before NVRTC is first loaded count.");
  m.def(
      "cpu_backend",
      [] {
        return nb::make_tuple(fgemm::cpu::isa_name(fgemm::cpu::selected_isa()),
                              fgemm::cpu::ThreadPool::instance().num_threads());
      },
      "(instruction set, threads) the CPU backend runs with, e.g. ('avx2', 2).");
  m.def("_force_config", &fgemm::cuda::force_config, "block_m"_a, "block_n"_a, "cluster_m"_a = 0,
        "cluster_n"_a = 0, "split_k"_a = 0, "c_slots"_a = 0, "num_stages"_a = 0,
        "For tuning: run later GPU GEMMs with this tile, cluster shape, split-K, ring of C and stages (all 0: the "
        "heuristics' choice again; split_k 0 with a tile: no split; num_stages 0: the most that fit).");
}
